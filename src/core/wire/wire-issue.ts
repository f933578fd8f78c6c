// A problem found in input. The core never throws on bad input: it returns these.
import type { WireIssueCode } from './wire-issue-codes.js';

export interface WireIssue {
  /** stable machine-readable code, e.g. 'hash-not-integer', 'truncated-json', 'missing-field' */
  readonly code: WireIssueCode;
  /** human sentence naming what was wrong */
  readonly message: string;
  /** JSON path of the offending value, e.g. `$[3].data.blocks[0].block_hash`; '$' for the document */
  readonly path: string;
  /** offset in the input where the problem starts, when known: bytes of a byte input, UTF-16 units of a string */
  readonly offset: number | null;
}

/** What a parser of one wire document answers: the value it read, and the problems it found on the way. */
export interface WireParse<T> {
  readonly value: T;
  readonly issues: WireIssue[];
}
