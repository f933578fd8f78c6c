// Arrays of u64 block keys as base64 of their little-endian bytes: 8 bytes → ~11 characters instead of ~20 decimal
// digits, exact, and no BigInt per key on the way in or out.

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const DECODE = new Int16Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DECODE[ALPHABET.charCodeAt(i)] = i;

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function toLeBytes(keys: BigUint64Array): Uint8Array {
  const bytes = new Uint8Array(keys.buffer, keys.byteOffset, keys.byteLength);
  if (LITTLE_ENDIAN) return bytes;
  const copy = new Uint8Array(bytes.length);
  for (let i = 0; i < bytes.length; i += 8) for (let j = 0; j < 8; j++) copy[i + j] = bytes[i + 7 - j]!;
  return copy;
}

export function encodeU64Base64(keys: BigUint64Array): string {
  const bytes = toLeBytes(keys);
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += ALPHABET[n >>> 18]! + ALPHABET[(n >>> 12) & 63]! + ALPHABET[(n >>> 6) & 63]! + ALPHABET[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += ALPHABET[n >>> 18]! + ALPHABET[(n >>> 12) & 63]! + '==';
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += ALPHABET[n >>> 18]! + ALPHABET[(n >>> 12) & 63]! + ALPHABET[(n >>> 6) & 63]! + '=';
  }
  return out;
}

/** Decodes; null when the text is not base64 of whole u64 values. */
export function decodeU64Base64(text: string): BigUint64Array | null {
  if (text.length % 4 !== 0) return null;
  let padding = 0;
  if (text.endsWith('==')) padding = 2;
  else if (text.endsWith('=')) padding = 1;
  const byteLength = (text.length / 4) * 3 - padding;
  if (byteLength % 8 !== 0) return null;
  const bytes = new Uint8Array(byteLength);
  let o = 0;
  for (let i = 0; i < text.length; i += 4) {
    let n = 0;
    for (let j = 0; j < 4; j++) {
      const c = text.charCodeAt(i + j);
      if (c === 61 && i + j >= text.length - padding) {
        n <<= 6;
        continue;
      }
      const v = c < 128 ? DECODE[c]! : -1;
      if (v < 0) return null;
      n = (n << 6) | v;
    }
    if (o < byteLength) bytes[o++] = (n >>> 16) & 255;
    if (o < byteLength) bytes[o++] = (n >>> 8) & 255;
    if (o < byteLength) bytes[o++] = n & 255;
  }
  if (!LITTLE_ENDIAN) {
    for (let i = 0; i < bytes.length; i += 8) bytes.subarray(i, i + 8).reverse();
  }
  return new BigUint64Array(bytes.buffer);
}
