import { CliError } from './cli-error.js';
const U64_MAX = (1n << 64n) - 1n;
/** Parses an unsigned 64-bit option value (decimal or 0x-hex), naming the option on error. */
export function parseU64Option(name, value) {
    if (!/^(?:\d+|0x[0-9a-fA-F]+)$/.test(value))
        throw new CliError(`${name}: '${value}' is not an unsigned 64-bit integer`);
    const parsed = BigInt(value);
    if (parsed > U64_MAX)
        throw new CliError(`${name}: '${value}' exceeds 2^64-1`);
    return parsed;
}
export function parsePositiveIntOption(name, value) {
    if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) {
        throw new CliError(`${name}: '${value}' is not a positive integer`);
    }
    return Number(value);
}
//# sourceMappingURL=parse-u64.js.map