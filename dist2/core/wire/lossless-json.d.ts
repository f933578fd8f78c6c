import type { WireIssue } from './wire-issue.js';
export type JsonValue = null | boolean | string | bigint | number | JsonValue[] | JsonObject;
export interface JsonObject {
    [key: string]: JsonValue;
}
export interface LosslessJsonParse {
    /** undefined when the text is not JSON (see issues) */
    readonly value: JsonValue | undefined;
    /** fatal problems, and non-fatal ones ('duplicate-key': the last value wins, as in JSON.parse) */
    readonly issues: WireIssue[];
}
/** Parses one JSON document. Never throws. */
export declare function parseLosslessJson(text: string): LosslessJsonParse;
export declare function isJsonObject(value: JsonValue | undefined): value is JsonObject;
/** True when the token was written as an integer (no fraction, no exponent). */
export declare function isJsonInteger(value: JsonValue | undefined): value is bigint;
/** The value as a JS number when it is a number token and finite; integers beyond 2^53 are rounded. */
export declare function jsonToNumber(value: JsonValue | undefined): number | null;
/** The value as a JS number when it is an integer token within ±(2^53-1). */
export declare function jsonToSafeInteger(value: JsonValue | undefined): number | null;
