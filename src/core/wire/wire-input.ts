// Parsers read UTF-8 bytes. Text callers (tests, log lines, the simulator) hand in strings: encoded here, and their
// issues' offsets are given back in the string's own UTF-16 units, so a string caller sees positions in its string.
import type { WireIssue } from './wire-issue.js';

const SURROGATE = /[\uD800-\uDFFF]/;
const ENCODER = new TextEncoder();

/**
 * UTF-8 of `text`. A lone surrogate (which no UTF-8 producer can write) is kept as its 3-byte form, which the
 * scanner rejects as 'invalid-unicode' like a surrogate written as bytes; a high surrogate ending the text becomes a
 * cut-off 4-byte sequence, so it reads as truncated input, as a cut-off pair would.
 */
export function utf8Of(text: string): Uint8Array {
  if (!SURROGATE.test(text)) return ENCODER.encode(text);
  const parts: number[] = [];
  for (let k = 0; k < text.length; k++) {
    const c = text.charCodeAt(k);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = text.charCodeAt(k + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        for (const x of ENCODER.encode(text.slice(k, k + 2))) parts.push(x);
        k++;
        continue;
      }
      if (k === text.length - 1) {
        parts.push(0xf0);
        continue;
      }
    }
    if (c >= 0xd800 && c <= 0xdfff) parts.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
    else for (const x of ENCODER.encode(text[k])) parts.push(x);
  }
  return Uint8Array.from(parts);
}

/** Maps byte offsets of utf8Of(text) to offsets in `text`, walking forward (offsets asked in order are cheap). */
export class CharOffsets {
  readonly #bytes: Uint8Array;
  readonly #chars: number;
  #byte = 0;
  #char = 0;

  constructor(bytes: Uint8Array, text: string) {
    this.#bytes = bytes;
    this.#chars = text.length;
  }

  of(byteOffset: number): number {
    if (byteOffset >= this.#bytes.length) return this.#chars + (byteOffset - this.#bytes.length);
    if (byteOffset < this.#byte) {
      this.#byte = 0;
      this.#char = 0;
    }
    const b = this.#bytes;
    for (; this.#byte < byteOffset; this.#byte++) {
      const c = b[this.#byte]!;
      if ((c & 0xc0) !== 0x80) this.#char += c >= 0xf0 ? 2 : 1;
    }
    return this.#char;
  }
}

/** The issues of a parse of utf8Of(text), with every offset (field and message) in `text`'s units. */
export function issuesInText(issues: readonly WireIssue[], bytes: Uint8Array, text: string): WireIssue[] {
  if (bytes.length === text.length) return issues as WireIssue[]; // ASCII: the same offsets
  const offsets = new CharOffsets(bytes, text);
  return issues.map((issue) => ({
    ...issue,
    message: issue.message.replace(/offset (\d+)/g, (_, n: string) => `offset ${offsets.of(Number(n))}`),
    offset: issue.offset === null ? null : offsets.of(issue.offset),
  }));
}
