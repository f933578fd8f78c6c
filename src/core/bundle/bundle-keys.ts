// Decision keys in a bundle: base64 of little-endian u64s, sharing the prefix they have with the previous turn of the
// same trajectory (KeyHistory, an LRU per correlation id that writer and reader keep alike).
import type { DecisionKeys } from '../state/observation-digester.js';
import { LruMap } from '../state/lru-map.js';
import { isHashAlgo, type HashAlgo } from '../wire/kv-event.js';
import { DecodeError, asObject, num, str, type Json, type JsonObject } from './bundle-fields.js';
import { decodeU64Base64, encodeU64Base64 } from './u64-base64.js';

/** trajectories whose last keys are remembered for prefix sharing (writer and reader must agree: see manifest) */
export const DEFAULT_KEY_HISTORY = 4096;

/** Keys shared with the previous turn of a trajectory: remembered per correlation id, LRU. */
export class KeyHistory {
  readonly #lru: LruMap<string, Map<string, BigUint64Array>>;

  constructor(cap = DEFAULT_KEY_HISTORY) {
    this.#lru = new LruMap(cap);
  }

  take(correlationId: string | null): Map<string, BigUint64Array> | undefined {
    return correlationId === null ? undefined : this.#lru.get(correlationId);
  }

  remember(correlationId: string | null, arrays: Map<string, BigUint64Array>): void {
    if (correlationId !== null) this.#lru.set(correlationId, arrays);
  }
}

function commonPrefix(a: BigUint64Array, b: BigUint64Array): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

export function encodeKeys(keys: DecisionKeys, correlationId: string | null, history: KeyHistory): JsonObject {
  const base = history.take(correlationId);
  const arrays = new Map<string, BigUint64Array>();
  const one = (name: string, arr: BigUint64Array): Json => {
    arrays.set(name, arr);
    const previous = base?.get(name);
    const shared = previous === undefined ? 0 : commonPrefix(previous, arr);
    return shared > 0 ? { p: shared, t: encodeU64Base64(arr.subarray(shared)) } : encodeU64Base64(arr);
  };
  const router: JsonObject = {};
  for (const [algo, arr] of keys.router) router[algo] = one(`r:${algo}`, arr);
  const worker: JsonObject = {};
  for (const [id, arr] of keys.worker) {
    // the worker keys are often the router's own array (same block size): say so instead of repeating them
    const same = [...keys.router.entries()].find(([, r]) => r === arr);
    worker[id] = same !== undefined ? { same: same[0] } : one(`w:${id}`, arr);
  }
  history.remember(correlationId, arrays);
  return { hashedTokens: keys.hashedTokens, tpb: keys.routerTokensPerBlock, router, worker };
}

export function decodeKeys(
  value: Json | undefined,
  correlationId: string | null,
  history: KeyHistory,
  path: string,
): DecisionKeys {
  const obj = asObject(value, path);
  const base = history.take(correlationId);
  const arrays = new Map<string, BigUint64Array>();
  const one = (name: string, v: Json | undefined, p: string): BigUint64Array => {
    let out: BigUint64Array | null;
    if (typeof v === 'string') out = decodeU64Base64(v);
    else {
      const o = asObject(v, p);
      const shared = num(o.p, `${p}.p`);
      const tail = decodeU64Base64(str(o.t, `${p}.t`));
      const previous = base?.get(name);
      if (previous === undefined || previous.length < shared)
        throw new DecodeError(p, 'refers to keys of an earlier turn the bundle never gave');
      if (tail === null) out = null;
      else {
        out = new BigUint64Array(shared + tail.length);
        out.set(previous.subarray(0, shared));
        out.set(tail, shared);
      }
    }
    if (out === null) throw new DecodeError(p, 'expected base64 of u64 block keys');
    arrays.set(name, out);
    return out;
  };
  const router = new Map<HashAlgo, BigUint64Array>();
  for (const [algo, v] of Object.entries(asObject(obj.router, `${path}.router`))) {
    if (!isHashAlgo(algo)) throw new DecodeError(`${path}.router`, `unknown hash algorithm ${algo}`);
    router.set(algo, one(`r:${algo}`, v, `${path}.router.${algo}`));
  }
  const worker = new Map<string, BigUint64Array>();
  for (const [id, v] of Object.entries(asObject(obj.worker, `${path}.worker`))) {
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && typeof v.same === 'string') {
      const arr = router.get(v.same as HashAlgo);
      if (arr === undefined)
        throw new DecodeError(`${path}.worker.${id}`, `refers to router keys ${v.same} that are absent`);
      worker.set(id, arr);
    } else {
      worker.set(id, one(`w:${id}`, v, `${path}.worker.${id}`));
    }
  }
  history.remember(correlationId, arrays);
  return {
    hashedTokens: num(obj.hashedTokens, `${path}.hashedTokens`),
    routerTokensPerBlock: num(obj.tpb, `${path}.tpb`),
    router,
    worker,
  };
}
