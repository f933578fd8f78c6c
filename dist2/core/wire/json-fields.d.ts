import type { WireIssue } from './wire-issue.js';
import type { JsonObject, JsonValue } from './lossless-json.js';
import type { PathSegments } from './json-scan.js';
export type Path = PathSegments;
export declare class FieldReader {
    readonly text: string;
    readonly issues: WireIssue[];
    constructor(text: string, issues: WireIssue[]);
    issue(code: string, message: string, path: Path): void;
    private wrongType;
    /** Non-negative integer within 2^53-1; absent or null → null. */
    uint(obj: JsonObject, key: string, path: Path): number | null;
    /** Any number (integer or float token); absent or null → null. */
    num(obj: JsonObject, key: string, path: Path): number | null;
    str(obj: JsonObject, key: string, path: Path): string | null;
    obj(obj: JsonObject, key: string, path: Path): JsonObject | null;
    /** A request id: integer (exact, bigint) or string. */
    id(obj: JsonObject, key: string, path: Path): bigint | string | null;
}
export declare function describeJson(value: JsonValue): string;
/** Parses `text` and hands back the root object, or null with issues. */
export declare function parseRootObject(text: string, what: string, issues: WireIssue[]): JsonObject | null;
