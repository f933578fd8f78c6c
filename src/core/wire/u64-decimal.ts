// The one range check of an unsigned 64-bit integer written in decimal, shared by the wire parser, the bundle
// decoder and the CLI's u64 flags, so they agree on what fits.

export const U64_MAX = 0xffff_ffff_ffff_ffffn;
const U64_MAX_DECIMAL = '18446744073709551615';

/**
 * Whether the decimal digits text[start, end) (the caller has checked they are digits) are at most 2^64-1.
 * Compares text, never allocating a BigInt: it runs for every hash of a body.
 */
export function decimalFitsU64(text: string, start = 0, end = text.length): boolean {
  while (end - start > 1 && text.charCodeAt(start) === 48) start++;
  const length = end - start;
  return length < 20 || (length === 20 && text.slice(start, end) <= U64_MAX_DECIMAL);
}

/** decimalFitsU64 over ASCII digit bytes (the byte parsers). */
export function decimalBytesFitU64(bytes: Uint8Array, start: number, end: number): boolean {
  while (end - start > 1 && bytes[start] === 48) start++;
  const length = end - start;
  if (length !== 20) return length < 20;
  for (let k = 0; k < 20; k++) {
    const d = bytes[start + k]! - U64_MAX_DECIMAL.charCodeAt(k);
    if (d !== 0) return d < 0;
  }
  return true;
}
