// How the JSON scanners report a problem: a ScanFailure thrown at the offset it was found, caught inside the parsers
// and turned into a WireIssue by their callers, which never throw.
import type { WireIssueCode } from './wire-issue-codes.js';

// Not an Error: capturing a stack per failure made bad input ~50x slower to report, and these never escape.
export class ScanFailure {
  readonly code: WireIssueCode;
  readonly message: string;
  readonly offset: number;
  /** syntax failures break the document: item boundaries after them are unknowable */
  readonly syntax: boolean;
  /** for missing fields: the name appended to the path of the object at `offset` */
  readonly field: string | null;

  constructor(code: WireIssueCode, message: string, offset: number, syntax: boolean, field: string | null) {
    this.code = code;
    this.message = message;
    this.offset = offset;
    this.syntax = syntax;
    this.field = field;
  }
}

export function failSyntax(code: WireIssueCode, message: string, offset: number): never {
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- internal control flow, caught by the parsers
  throw new ScanFailure(code, message, offset, true, null);
}

export function failValue(code: WireIssueCode, message: string, offset: number, field: string | null = null): never {
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- internal control flow, caught by the parsers
  throw new ScanFailure(code, message, offset, false, field);
}

/** The input of `length` bytes ends inside a value. */
export function failTruncated(length: number): never {
  return failSyntax('truncated-json', `input ends early at offset ${length} (truncated JSON)`, length);
}
