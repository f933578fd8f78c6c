// Deterministic token streams shared by every implementation compared (TypeScript, Python, C++): a 32-bit LCG
// whose top 17 bits are the token id, so all of them hash exactly the same input and must agree on the checksum.

export function lcgTokens(count: number, seed: number): Uint32Array {
  const out = new Uint32Array(count);
  let x = seed >>> 0;
  for (let i = 0; i < count; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[i] = x >>> 15;
  }
  return out;
}

const LOW_WORD = new Uint32Array(new BigUint64Array([1n]).buffer)[0] === 1 ? 0 : 1;

/** XOR of all u64 values and the last one, as decimal strings: what every implementation prints to be compared. */
export function chainChecksum(hashes: BigUint64Array): { xor: string; last: string } {
  const halves = new Uint32Array(hashes.buffer, hashes.byteOffset, hashes.length * 2);
  let hi = 0;
  let lo = 0;
  for (let i = 0; i < hashes.length; i++) {
    lo ^= halves[2 * i + LOW_WORD]!;
    hi ^= halves[2 * i + 1 - LOW_WORD]!;
  }
  const xor = ((BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0)).toString();
  const last = hashes.length === 0 ? '0' : hashes[hashes.length - 1]!.toString();
  return { xor, last };
}
