// The V2 block key a ZMQ stream computes for every stored block it re-keys (SHA-256 of parent key ‖ 16 tokens, two
// compressions), timed in this process three ways: the hasher the re-keyer keeps (the WebAssembly kernel), its
// JavaScript loop, and @noble/hashes' general SHA-256 over the same message. Each must give the same keys.
import { sha256 } from '@noble/hashes/sha2.js';
import { BlockSha256 } from '../../src/core/hashing/block-sha256.js';
import { median } from './stats.js';

export interface RekeyHashRates {
  /** nanoseconds per key, median of the rounds */
  readonly kernelNs: number;
  readonly jsNs: number;
  readonly nobleNs: number;
}

const TOKENS = 16;
const KEYS = 200_000;
const ROUNDS = 5;

function timeKeys(hash: (parent: Uint8Array, tokens: Uint32Array) => Uint8Array): { ns: number; check: number } {
  const parent = Uint8Array.from({ length: 32 }, (_, i) => i * 7);
  const tokens = Uint32Array.from({ length: TOKENS }, (_, i) => 100_000 + i * 977);
  let check = 0;
  const t0 = process.hrtime.bigint();
  for (let n = 0; n < KEYS; n++) {
    tokens[0] = n;
    const key = hash(parent, tokens);
    check = (check * 31 + key[0]! + key[31]!) | 0;
  }
  return { ns: Number(process.hrtime.bigint() - t0) / KEYS, check };
}

export function rekeyHashRates(): RekeyHashRates {
  const kernel = new BlockSha256();
  const js = new BlockSha256({ wasm: false });
  const message = new Uint8Array(32 + 4 * TOKENS);
  const impls = {
    kernel: (p: Uint8Array, t: Uint32Array) => kernel.hash(p, t, 0, t.length),
    js: (p: Uint8Array, t: Uint32Array) => js.hash(p, t, 0, t.length),
    noble: (p: Uint8Array, t: Uint32Array) => {
      message.set(p, 0);
      message.set(new Uint8Array(t.buffer, t.byteOffset, t.byteLength), 32);
      return sha256(message);
    },
  };
  const ns: Record<keyof typeof impls, number[]> = { kernel: [], js: [], noble: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const checks = new Set<number>();
    for (const [name, impl] of Object.entries(impls) as [keyof typeof impls, (typeof impls)['js']][]) {
      const r = timeKeys(impl);
      ns[name].push(r.ns);
      checks.add(r.check);
    }
    if (checks.size !== 1) throw new Error('the V2 block-key hashers disagree on the same messages');
  }
  return { kernelNs: median(ns.kernel), jsNs: median(ns.js), nobleNs: median(ns.noble) };
}
