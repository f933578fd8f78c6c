/** Parses an unsigned 64-bit option value (decimal or 0x-hex), naming the option on error. */
export declare function parseU64Option(name: string, value: string): bigint;
export declare function parsePositiveIntOption(name: string, value: string): number;
