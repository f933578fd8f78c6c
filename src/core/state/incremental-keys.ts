// Block keys of a follow-up turn reuse the keys of its trajectory's previous turn: agentic prompts grow by appending,
// so all but the last few blocks are unchanged. A rolling 64-bit prefix fingerprint every FINGERPRINT_STRIDE tokens
// (two independent 32-bit lanes, ~1 ns per token) finds how long the shared token prefix is without keeping the
// previous prompt; the v1 chain then continues from the last reused key. Other algorithms (v2 needs the full 32-byte
// parent) and first turns hash from scratch. The result is bit-identical to hashing the whole prompt.
import { blockKeyChain } from '../hashing/block-key.js';
import { routerHashedTokens } from '../hashing/router-chunking.js';
import { hashV1Chain } from '../hashing/v1-block-key.js';
import type { HashAlgo } from '../wire/kv-event.js';

export const FINGERPRINT_STRIDE = 16;

/** Prefix fingerprints: lanes [a, b] after each FINGERPRINT_STRIDE tokens. */
export function prefixFingerprints(tokens: ArrayLike<number>): Uint32Array {
  const checkpoints = Math.floor(tokens.length / FINGERPRINT_STRIDE);
  const out = new Uint32Array(2 * checkpoints);
  let a = 0x811c9dc5;
  let b = 0x2545f491;
  for (let c = 0; c < checkpoints; c++) {
    const end = (c + 1) * FINGERPRINT_STRIDE;
    for (let i = c * FINGERPRINT_STRIDE; i < end; i++) {
      const t = tokens[i]! >>> 0;
      a = Math.imul(a ^ t, 0x01000193);
      a ^= a >>> 15;
      b = Math.imul(b + t + 0x9e3779b9, 0x85ebca77);
      b ^= b >>> 13;
      b = Math.imul(b, 0xc2b2ae3d);
    }
    out[2 * c] = a >>> 0;
    out[2 * c + 1] = b >>> 0;
  }
  return out;
}

/**
 * The prefix fingerprints a decision's digest compares turns by: those of the tokens the router hashes. They depend on
 * the prompt alone, so the relay computes them where it read the prompt (its scan thread) and the decision carries
 * them (DecisionObservation.promptFingerprints), sparing the state's event loop a pass over every token.
 */
export function promptFingerprints(prompt: Uint32Array): Uint32Array {
  return prefixFingerprints(routerHashedTokens(prompt));
}

/** Whether `fingerprints` can be the prompt fingerprints of a prompt of `promptLength` tokens (their count). */
export function fingerprintsFit(fingerprints: Uint32Array, promptLength: number): boolean {
  return fingerprints.length === 2 * Math.floor(Math.max(promptLength - 1, 0) / FINGERPRINT_STRIDE);
}

/** Tokens the two prompts share for sure: the last checkpoint where both fingerprints agree. */
export function sharedPrefixTokens(previous: Uint32Array, current: Uint32Array): number {
  const n = Math.min(previous.length, current.length);
  let i = 0;
  while (i < n && previous[i] === current[i] && previous[i + 1] === current[i + 1]) i += 2;
  return (i / 2) * FINGERPRINT_STRIDE;
}

/**
 * Keys of `tokens` in blocks of `blockSize`, reusing `previous` (the keys of an earlier prompt with the same first
 * `sharedTokens` tokens, same block size and algorithm) for every block that lies inside the shared prefix.
 */
export function extendKeyChain(
  tokens: Uint32Array,
  blockSize: number,
  algo: HashAlgo,
  previous: BigUint64Array | undefined,
  sharedTokens: number,
): BigUint64Array {
  const reuse =
    previous === undefined || algo !== 'v1_block_key'
      ? 0
      : Math.min(Math.floor(sharedTokens / blockSize), previous.length);
  if (reuse === 0 || previous === undefined) return blockKeyChain(tokens, blockSize, algo);
  const total = Math.ceil(tokens.length / blockSize);
  const out = new BigUint64Array(total);
  out.set(previous.subarray(0, reuse));
  if (reuse < total)
    out.set(hashV1Chain(tokens.subarray(reuse * blockSize), blockSize, {}, previous[reuse - 1]), reuse);
  return out;
}
