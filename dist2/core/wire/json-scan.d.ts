import type { WireIssue } from './wire-issue.js';
/** Nesting limit of the validating skipper and the generic parser, so hostile input cannot blow the stack. */
export declare const MAX_DEPTH = 256;
export declare class ScanFailure {
    readonly code: string;
    readonly message: string;
    readonly offset: number;
    /** syntax failures break the document: item boundaries after them are unknowable */
    readonly syntax: boolean;
    /** for missing fields: the name appended to the path of the object at `offset` */
    readonly field: string | null;
    constructor(code: string, message: string, offset: number, syntax: boolean, field: string | null);
}
export declare function failSyntax(code: string, message: string, offset: number): never;
export declare function failValue(code: string, message: string, offset: number, field?: string | null): never;
export declare function truncated(text: string): never;
/** A short, printable excerpt of the input at `offset` for messages. */
export declare function excerpt(text: string, offset: number): string;
export declare function unexpected(text: string, offset: number, expected: string): never;
export declare function skipWs(text: string, i: number): number;
/** Set by scanString: whether the last scanned string contained a backslash escape. */
export declare let stringHadEscape: boolean;
/**
 * Validates the string starting at the quote `i`; returns the offset after the closing quote.
 * Rejects raw control characters, bad escapes and unpaired surrogates (raw or escaped): they cannot come from a
 * UTF-8 body a JSON producer wrote, so they mark corruption.
 */
export declare function scanString(text: string, i: number): number;
/** The value of a string already validated by scanString (`start` at the quote, `end` after the closing quote). */
export declare function decodeString(text: string, start: number, end: number, hadEscape: boolean): string;
/** Shape of the last number scanned by scanNumber. */
export declare const numberShape: {
    negative: boolean;
    fraction: boolean;
    exponent: boolean;
    intStart: number;
    intEnd: number;
};
/** Validates a JSON number at `i` (strict grammar); returns the offset after it and fills numberShape. */
export declare function scanNumber(text: string, i: number): number;
/** Validates any JSON value at `i` (whitespace already skipped); returns the offset after it. */
export declare function skipValue(text: string, i: number, depth?: number): number;
export declare function pathKey(path: string, key: string): string;
/**
 * JSON path of the innermost value (or key) at `target`, scanning forward from the value at `start` whose path
 * is `path`. One lenient pass that never throws, so it also works on broken input; only used on the error path,
 * so the hot parser never tracks paths.
 */
export declare function pathAt(text: string, start: number, path: string, target: number): string;
export declare function toIssue(failure: ScanFailure, path: string): WireIssue;
export declare function internalIssue(error: unknown, offset: number | null): WireIssue;
/** A JSON path as segments: object keys and array indices. */
export type PathSegments = readonly (string | number)[];
export declare function formatPath(segments: PathSegments): string;
/** Offset of the value at `segments` in valid JSON `text`, or null when it is absent (error path only). */
export declare function offsetAt(text: string, segments: PathSegments): number | null;
