import { isJsonObject, parseLosslessJson } from './lossless-json.js';
import { formatPath, offsetAt } from './json-scan.js';
export class FieldReader {
    text;
    issues;
    constructor(text, issues) {
        this.text = text;
        this.issues = issues;
    }
    issue(code, message, path) {
        const offset = offsetAt(this.text, path);
        const where = formatPath(path);
        this.issues.push({ code, message: `${where}: ${message}${offset === null ? '' : ` (offset ${offset})`}`, path: where, offset });
    }
    wrongType(value, expected, path) {
        this.issue('wrong-type', `must be ${expected}, found ${describeJson(value)}`, path);
        return null;
    }
    /** Non-negative integer within 2^53-1; absent or null → null. */
    uint(obj, key, path) {
        const value = obj[key];
        if (value === undefined || value === null)
            return null;
        const at = [...path, key];
        if (typeof value === 'bigint') {
            if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) {
                this.issue('number-out-of-range', `${value} is outside 0..2^53-1`, at);
                return null;
            }
            return Number(value);
        }
        if (typeof value === 'number') {
            this.issue('not-an-integer', `${value} is not written as an integer`, at);
            return null;
        }
        return this.wrongType(value, 'an unsigned integer', at);
    }
    /** Any number (integer or float token); absent or null → null. */
    num(obj, key, path) {
        const value = obj[key];
        if (value === undefined || value === null)
            return null;
        if (typeof value === 'bigint')
            return Number(value);
        if (typeof value === 'number')
            return value;
        return this.wrongType(value, 'a number', [...path, key]);
    }
    str(obj, key, path) {
        const value = obj[key];
        if (value === undefined || value === null)
            return null;
        if (typeof value === 'string')
            return value;
        return this.wrongType(value, 'a string', [...path, key]);
    }
    obj(obj, key, path) {
        const value = obj[key];
        if (value === undefined || value === null)
            return null;
        if (isJsonObject(value))
            return value;
        return this.wrongType(value, 'an object', [...path, key]);
    }
    /** A request id: integer (exact, bigint) or string. */
    id(obj, key, path) {
        const value = obj[key];
        if (value === undefined || value === null)
            return null;
        if (typeof value === 'bigint' || typeof value === 'string')
            return value;
        return this.wrongType(value, 'an integer or a string', [...path, key]);
    }
}
export function describeJson(value) {
    if (value === null)
        return 'null';
    if (Array.isArray(value))
        return 'an array';
    if (typeof value === 'bigint')
        return `the integer ${value}`;
    if (typeof value === 'number')
        return `the number ${value}`;
    if (typeof value === 'string')
        return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
    if (typeof value === 'boolean')
        return String(value);
    return 'an object';
}
/** Parses `text` and hands back the root object, or null with issues. */
export function parseRootObject(text, what, issues) {
    const parsed = parseLosslessJson(text);
    issues.push(...parsed.issues);
    if (parsed.value === undefined)
        return null;
    if (!isJsonObject(parsed.value)) {
        issues.push({ code: 'wrong-type', message: `${what} must be a JSON object, found ${describeJson(parsed.value)}`, path: '$', offset: 0 });
        return null;
    }
    return parsed.value;
}
//# sourceMappingURL=json-fields.js.map