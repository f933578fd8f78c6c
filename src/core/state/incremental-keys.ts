// Block keys of a follow-up turn reuse the keys of its trajectory's previous turn: agentic prompts grow by appending,
// so all but the last few blocks are unchanged. A rolling 64-bit prefix fingerprint every FINGERPRINT_STRIDE tokens
// (two independent 32-bit lanes, ~1 ns per token, see prefixFingerprints) finds how long the shared token prefix is without keeping the
// previous prompt; the v1 chain then continues from the last reused key. Other algorithms (v2 needs the full 32-byte
// parent) and first turns hash from scratch. The result is bit-identical to hashing the whole prompt.
import { blockKeyChain } from '../hashing/block-key.js';
import { routerHashedTokens } from '../hashing/router-chunking.js';
import { hashV1Chain } from '../hashing/v1-block-key.js';
import type { HashAlgo } from '../wire/kv-event.js';

export const FINGERPRINT_STRIDE = 16;

// Each stride of tokens is hashed on its own (two 32-bit lanes), and the checkpoints chain the strides' hashes: four
// strides are hashed side by side, so the CPU overlaps their multiply chains instead of waiting on one (3x faster
// than one chain through every token). A token step — xor (lane a) or add (lane b), then a multiply by an odd
// constant — is a bijection of the lane in the token and in the state, so a stride that differs in one token always
// hashes differently; the checkpoint's mixing folds the high bits down. The fingerprints live in memory only: their
// definition may change freely.
const LANE_A_SEED = 0x9e3779b9;
const LANE_B_SEED = 0x85ebca6b;

/** checkpoint lane a after a stride whose lane hash is `stride` */
const chainA = (previous: number, stride: number): number => {
  const x = Math.imul(previous ^ stride ^ (stride >>> 15), 0x85ebca77);
  return (x ^ (x >>> 16)) >>> 0;
};
const chainB = (previous: number, stride: number): number => {
  const x = Math.imul(previous ^ stride ^ (stride >>> 13), 0x27d4eb2f);
  return (x ^ (x >>> 15)) >>> 0;
};

/** Prefix fingerprints: lanes [a, b] after each FINGERPRINT_STRIDE tokens. */
export function prefixFingerprints(tokens: ArrayLike<number>): Uint32Array {
  const S = FINGERPRINT_STRIDE;
  const checkpoints = Math.floor(tokens.length / S);
  const out = new Uint32Array(2 * checkpoints);
  let a = 0x811c9dc5;
  let b = 0x2545f491;
  let c = 0;
  for (; c + 4 <= checkpoints; c += 4) {
    // prettier-ignore
    let a0 = LANE_A_SEED, b0 = LANE_B_SEED, a1 = a0, b1 = b0, a2 = a0, b2 = b0, a3 = a0, b3 = b0;
    for (let i = c * S, end = i + S; i < end; i++) {
      const t0 = tokens[i]!,
        t1 = tokens[i + S]!,
        t2 = tokens[i + 2 * S]!,
        t3 = tokens[i + 3 * S]!;
      a0 = Math.imul(a0 ^ t0, 0x01000193);
      b0 = Math.imul(b0 + t0, 0xc2b2ae35);
      a1 = Math.imul(a1 ^ t1, 0x01000193);
      b1 = Math.imul(b1 + t1, 0xc2b2ae35);
      a2 = Math.imul(a2 ^ t2, 0x01000193);
      b2 = Math.imul(b2 + t2, 0xc2b2ae35);
      a3 = Math.imul(a3 ^ t3, 0x01000193);
      b3 = Math.imul(b3 + t3, 0xc2b2ae35);
    }
    out[2 * c] = a = chainA(a, a0);
    out[2 * c + 1] = b = chainB(b, b0);
    out[2 * c + 2] = a = chainA(a, a1);
    out[2 * c + 3] = b = chainB(b, b1);
    out[2 * c + 4] = a = chainA(a, a2);
    out[2 * c + 5] = b = chainB(b, b2);
    out[2 * c + 6] = a = chainA(a, a3);
    out[2 * c + 7] = b = chainB(b, b3);
  }
  // the last strides, one at a time (same hash)
  for (; c < checkpoints; c++) {
    let sa = LANE_A_SEED;
    let sb = LANE_B_SEED;
    for (let i = c * S, end = i + S; i < end; i++) {
      const t = tokens[i]!;
      sa = Math.imul(sa ^ t, 0x01000193);
      sb = Math.imul(sb + t, 0xc2b2ae35);
    }
    out[2 * c] = a = chainA(a, sa);
    out[2 * c + 1] = b = chainB(b, sb);
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
