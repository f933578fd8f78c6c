// A prompt and its chained block hashes, as a CTX worker stores them and as the router chunks them
// (docs/trtllm-wire.md §1.4): tokens[0, L-1) — the last prompt token is never part of a block — in blocks of
// `blockSize`, the final block possibly partial, each chained to the previous one.
//
// Trajectory prompts grow by appending, so `ChainBuilder` keeps the full blocks already hashed and each turn
// hashes only new tokens; the partial tail is re-hashed per prompt (it changes as the context grows).
import {
  blockKey64,
  hashV1Into,
  keyToHex,
  truncateKeyToU64,
  v2BlockKey,
  v2Chain,
  v2RootKey,
  wireHashChain,
} from '../core/hashing/index.js';
import { u64ToBigInt } from '../core/hashing/u64.js';
import type { HashAlgo, WireBlockHash } from '../core/wire/kv-event.js';
import { fingerprint, fingerprintOf } from './block-key-set.js';

export interface PromptBlocks {
  readonly blockSize: number;
  readonly algo: HashAlgo;
  /** table keys (u64; a v2_sha256 key is its first 8 bytes big-endian) */
  readonly keys: readonly bigint[];
  /** the hashes as they appear on the wire (bigint, or hex for v2_sha256) */
  readonly wire: readonly WireBlockHash[];
  /** fingerprints of the keys (see block-key-set.ts) */
  readonly fps: readonly number[];
  /** how many of the blocks are full (the rest, at most one, is the partial tail) */
  readonly fullBlocks: number;
  /** first token of each block is blockSize * index; the hashed span is [0, hashedTokens) */
  readonly hashedTokens: number;
}

export interface Prompt {
  /** the prompt token ids as the CTX worker receives them */
  readonly tokens: Uint32Array;
  /** blocks of tokens[0, L-1) in `blockSize`, chained with `algo` (memoised) */
  blocks(blockSize: number, algo: HashAlgo): PromptBlocks;
  /** the same prompt as a router that renders/tokenizes differently sees it (router.token_drift) */
  drifted(): Prompt;
  /** its request was served: drop what is memoised (recomputed if asked again) so served prompts hold no hashes */
  release?(): void;
}

/** The token a drifted router sees at position 0 instead of the worker's (a chat-template / BOS difference). */
export function driftToken(token: number): number {
  return (token ^ 1) >>> 0;
}

function memoKey(blockSize: number, algo: HashAlgo): string {
  return `${blockSize}/${algo}`;
}

/** A prompt hashed from scratch (HTTP requests, tests). */
export class StaticPrompt implements Prompt {
  readonly tokens: Uint32Array;
  readonly #memo = new Map<string, PromptBlocks>();

  constructor(tokens: Uint32Array) {
    this.tokens = tokens;
  }

  blocks(blockSize: number, algo: HashAlgo): PromptBlocks {
    const key = memoKey(blockSize, algo);
    const cached = this.#memo.get(key);
    if (cached !== undefined) return cached;
    const hashedTokens = Math.max(this.tokens.length - 1, 0);
    const span = this.tokens.subarray(0, hashedTokens);
    let keys: bigint[];
    let wire: WireBlockHash[];
    if (algo === 'v2_sha256') {
      const raw = v2Chain(span, blockSize);
      keys = raw.map(truncateKeyToU64);
      wire = raw.map(keyToHex);
    } else {
      wire = wireHashChain(span, blockSize, algo);
      keys = wire.map(blockKey64);
    }
    const blocks: PromptBlocks = {
      blockSize,
      algo,
      keys,
      wire,
      fps: keys.map(fingerprint),
      fullBlocks: Math.floor(hashedTokens / blockSize),
      hashedTokens,
    };
    this.#memo.set(key, blocks);
    return blocks;
  }

  drifted(): Prompt {
    const copy = this.tokens.slice();
    if (copy.length > 0) copy[0] = driftToken(copy[0]!);
    return new StaticPrompt(copy);
  }

  release(): void {
    this.#memo.clear();
  }
}

const out = new Uint32Array(2);

/** Incrementally hashed full blocks of a growing token sequence. */
export class ChainBuilder {
  readonly blockSize: number;
  readonly algo: HashAlgo;
  readonly drift: boolean;
  readonly keys: bigint[] = [];
  readonly wire: WireBlockHash[] = [];
  readonly fps: number[] = [];
  #hi = 0;
  #lo = 0;
  #parentKey: Uint8Array | null = null;
  readonly #rawKeys: Uint8Array[] = [];

  constructor(blockSize: number, algo: HashAlgo, drift: boolean) {
    this.blockSize = blockSize;
    this.algo = algo;
    this.drift = drift;
  }

  #source(tokens: Uint32Array, start: number, end: number): [ArrayLike<number>, number, number] {
    if (!this.drift || start > 0) return [tokens, start, end];
    const copy = tokens.slice(start, end);
    if (copy.length > 0) copy[0] = driftToken(copy[0]!);
    return [copy, 0, copy.length];
  }

  #hash(
    tokens: Uint32Array,
    start: number,
    end: number,
    parentHi: number,
    parentLo: number,
    parentKey: Uint8Array | null,
  ): [bigint, WireBlockHash, Uint8Array | null, number] {
    const [src, s, e] = this.#source(tokens, start, end);
    if (this.algo === 'v1_block_key') {
      hashV1Into(src, s, e, parentHi, parentLo, null, null, out);
      const key = u64ToBigInt(out[0]!, out[1]!);
      return [key, key, null, fingerprintOf(out[0]!, out[1]!)];
    }
    const raw = v2BlockKey(parentKey ?? v2RootKey(), src, s, e);
    const key = truncateKeyToU64(raw);
    return [key, this.algo === 'v2_sha256' ? keyToHex(raw) : key, raw, fingerprint(key)];
  }

  /** hashes every full block of tokens[0, upTo) not hashed yet */
  extend(tokens: Uint32Array, upTo: number): void {
    const bs = this.blockSize;
    while ((this.keys.length + 1) * bs <= upTo) {
      const start = this.keys.length * bs;
      const [key, wire, raw, fp] = this.#hash(tokens, start, start + bs, this.#hi, this.#lo, this.#parentKey);
      this.keys.push(key);
      this.wire.push(wire);
      this.fps.push(fp);
      this.#hi = Number(key >> 32n);
      this.#lo = Number(key & 0xffff_ffffn);
      this.#parentKey = raw;
      if (raw !== null) this.#rawKeys.push(raw);
    }
  }

  /** blocks of tokens[0, hashedTokens) (full ones from the chain, the partial tail hashed now) */
  blocksOf(tokens: Uint32Array, hashedTokens: number): PromptBlocks {
    this.extend(tokens, hashedTokens);
    const bs = this.blockSize;
    const fullBlocks = Math.floor(hashedTokens / bs);
    const keys = this.keys.slice(0, fullBlocks);
    const wire = this.wire.slice(0, fullBlocks);
    const fps = this.fps.slice(0, fullBlocks);
    if (hashedTokens % bs !== 0) {
      const parentKey = fullBlocks === 0 ? null : this.#parentKeyAt(fullBlocks - 1);
      const parent = fullBlocks === 0 ? 0n : this.keys[fullBlocks - 1]!;
      const [key, w, , fp] = this.#hash(
        tokens,
        fullBlocks * bs,
        hashedTokens,
        Number(parent >> 32n),
        Number(parent & 0xffff_ffffn),
        parentKey,
      );
      keys.push(key);
      wire.push(w);
      fps.push(fp);
    }
    return { blockSize: bs, algo: this.algo, keys, wire, fps, fullBlocks, hashedTokens };
  }

  #parentKeyAt(index: number): Uint8Array | null {
    return this.algo === 'v1_block_key' ? null : (this.#rawKeys[index] ?? null);
  }
}
