// Turns the token-bearing parts of observations into what the joins need, so prompts never have to leave the
// process: per decision the router-style block keys (router tokens_per_block, each server's algorithm, last token
// excluded, partial tail) and the worker-style keys (worker block size), per stored event the hash checks and block
// token counts. The state computes digests itself from live observations; `kvsentinel record` computes the same
// digests at record time and writes them to the bundle instead of token ids. Both feed this class the same
// observation sequence, so the context it keeps in its DeploymentFacts (router settings, server algorithms, block
// sizes; deployment-facts.ts) — and therefore the digests — are identical.
import { routerHashedTokens } from '../hashing/router-chunking.js';
import type { Observation } from '../observe/observation.js';
import { HASH_ALGOS, type HashAlgo, type KvEvent } from '../wire/kv-event.js';
import { HashVerifier, type StoredEventCheck } from './hash-verifier.js';
import { extendKeyChain, fingerprintsFit, prefixFingerprints, sharedPrefixTokens } from './incremental-keys.js';
import { LruMap } from './lru-map.js';
import { DEFAULT_HASH_ALGO, DeploymentFacts } from './deployment-facts.js';

export interface DecisionKeys {
  /** prompt tokens the router hashes (prompt length − 1) */
  readonly hashedTokens: number;
  readonly routerTokensPerBlock: number;
  /** router-style keys per hash algorithm in use by some server */
  readonly router: ReadonlyMap<HashAlgo, BigUint64Array>;
  /** worker-style keys by `workerKeyId(algo, blockSize)`; absent when no worker block size is known yet */
  readonly worker: ReadonlyMap<string, BigUint64Array>;
}

export interface WorkerEventsDigest {
  /** aligned with the observation's events: a check for each `stored` event, null for the others */
  readonly stored: readonly (StoredEventCheck | null)[];
}

export type ObservationDigest =
  | { readonly kind: 'decision'; readonly keys: DecisionKeys }
  /** keys of the worker's own prompt token ids (CTX response), for requests that carried none */
  | { readonly kind: 'outcome'; readonly keys: DecisionKeys }
  | { readonly kind: 'worker-events'; readonly digest: WorkerEventsDigest };

function unsaltedRoots(check: StoredEventCheck | null, event: KvEvent): StoredEventCheck | null {
  if (
    check === null ||
    event.data.type !== 'stored' ||
    event.data.parentHash !== null ||
    check.checks[0] !== 'mismatch'
  )
    return check;
  return { ...check, checks: check.checks.map((c, i) => (i === 0 ? 'unverifiable' : c)), alternative: null };
}

// one string per (algo, size), made once at load for every block size a build uses: the per-decision join looks
// keys up by it for every server, and a string made per lookup would cost more than the lookup
const COMMON_BLOCK_SIZES = 512;
const WORKER_KEY_IDS: ReadonlyMap<HashAlgo, readonly string[]> = new Map(
  HASH_ALGOS.map((algo) => [algo, Array.from({ length: COMMON_BLOCK_SIZES + 1 }, (_, size) => `${algo}/${size}`)]),
);

export function workerKeyId(algo: HashAlgo, blockSize: number): string {
  return WORKER_KEY_IDS.get(algo)?.[blockSize] ?? `${algo}/${blockSize}`;
}

/** The worker block sizes a decision's keys were computed for (parsed from the `workerKeyId`s). */
export function workerKeySizes(keys: DecisionKeys): number[] {
  const sizes = new Set<number>();
  for (const id of keys.worker.keys()) {
    const size = Number(id.slice(id.lastIndexOf('/') + 1));
    if (Number.isInteger(size) && size > 0) sizes.add(size);
  }
  return [...sizes].sort((a, b) => a - b);
}

/**
 * The router-style keys of a decision as a router chunking `tokensPerBlock` tokens would compute them: the router
 * keys when that is the digest's router chunk size, else the worker keys of that size (same chunking, same chain).
 */
export function keysAtBlockSize(
  keys: DecisionKeys,
  tokensPerBlock: number,
  algo: HashAlgo,
): BigUint64Array | undefined {
  if (tokensPerBlock === keys.routerTokensPerBlock) return keys.router.get(algo) ?? keys.router.values().next().value;
  return keys.worker.get(workerKeyId(algo, tokensPerBlock));
}

interface TrajectoryKeys {
  readonly fingerprints: Uint32Array;
  readonly routerTokensPerBlock: number;
  readonly router: ReadonlyMap<HashAlgo, BigUint64Array>;
  readonly worker: ReadonlyMap<string, BigUint64Array>;
}

/** Trajectories whose last keys are kept to hash their next turn incrementally (≥ the concurrency in practice). */
export const DEFAULT_INCREMENTAL_TRAJECTORIES = 1024;

export class ObservationDigester {
  /** the router's and the servers' facts the keys depend on, kept as the observations state them */
  readonly facts: DeploymentFacts;
  readonly #verifier = new HashVerifier();
  readonly #trajectories: LruMap<string, TrajectoryKeys>;

  constructor(incrementalTrajectories = DEFAULT_INCREMENTAL_TRAJECTORIES, facts = new DeploymentFacts()) {
    this.#trajectories = new LruMap(incrementalTrajectories);
    this.facts = facts;
  }

  /** entries its bounded caches dropped: trajectories' last keys (LRU), full v2 keys of the hash verifier (LRU) */
  get evicted(): { readonly incrementalKeys: number; readonly v2Keys: number } {
    return { incrementalKeys: this.#trajectories.dropped, v2Keys: this.#verifier.v2KeysEvicted };
  }

  /** Computes the digest of an observation from its tokens (null when it has none to digest). */
  digest(obs: Observation): ObservationDigest | null {
    if (obs.kind === 'decision') {
      if (obs.promptTokens === null) return null;
      this.facts.touch(obs.server);
      return {
        kind: 'decision',
        keys: this.#decisionKeys(obs.promptTokens, obs.correlationId, obs.promptFingerprints),
      };
    }
    if (obs.kind === 'outcome') {
      const tokens = obs.workerPromptTokens;
      if (tokens === null || tokens === undefined || tokens.length === 0) return null;
      this.facts.touch(obs.server);
      return { kind: 'outcome', keys: this.#decisionKeys(tokens, null, undefined) };
    }
    if (obs.kind === 'worker-events') {
      if (obs.stream?.hashes === 'rekeyed') {
        // keys kvsentinel chained itself from the tokens: only what the source checked of the engine's own hashes
        // before re-keying (vLLM sha256_cbor) is verified; the rest is unverifiable
        const stored = obs.events.map((event, i): StoredEventCheck | null => {
          if (event.data.type !== 'stored') return null;
          const engine = obs.engineChecks?.[i];
          const checks =
            engine !== undefined && engine !== null && engine.length === event.data.blocks.length
              ? engine
              : event.data.blocks.map(() => 'unverifiable' as const);
          return { checks, tokenCounts: event.data.blocks.map((b) => b.tokens.length), alternative: null };
        });
        return { kind: 'worker-events', digest: { stored } };
      }
      const stored = obs.events.map((event) => this.#checkStored(obs.server, event));
      // TensorRT-LLM's stream does not carry a request's cache_salt, which only the root key covers: a root that
      // does not recompute may be salted, so it is unverifiable (its children, chained to a key never confirmed,
      // already are), never a mismatch
      if (obs.stream !== undefined)
        return { kind: 'worker-events', digest: { stored: stored.map((c, i) => unsaltedRoots(c, obs.events[i]!)) } };
      return { kind: 'worker-events', digest: { stored } };
    }
    return null;
  }

  /** Updates the facts from an observation (after digesting it). */
  observe(obs: Observation, digest: ObservationDigest | null): void {
    this.facts.observe(obs, digest?.kind === 'worker-events' ? digest.digest.stored : null);
  }

  #checkStored(server: string, event: KvEvent): StoredEventCheck | null {
    if (event.data.type !== 'stored') return null;
    const algo = event.hashAlgo ?? this.facts.advertisedHashAlgo(server) ?? DEFAULT_HASH_ALGO;
    return this.#verifier.check(event.data.parentHash, event.data.blocks, algo);
  }

  #decisionKeys(prompt: Uint32Array, correlationId: string | null, carried: Uint32Array | undefined): DecisionKeys {
    const facts = this.facts;
    const tpb = facts.routerTokensPerBlock();
    const algos = new Set<HashAlgo>();
    const workerSpecs = new Map<string, { algo: HashAlgo; size: number }>();
    for (const server of facts.serverIds()) {
      const algo = facts.hashAlgoOf(server);
      algos.add(algo);
      const size = facts.blockSizeOf(server);
      if (size !== null) workerSpecs.set(workerKeyId(algo, size), { algo, size });
    }
    if (algos.size === 0) algos.add(DEFAULT_HASH_ALGO);
    const hashed = routerHashedTokens(prompt) as Uint32Array;
    // a follow-up turn shares most of its prompt with the previous one: reuse those keys (the fingerprints that find
    // how much it shares are only needed for a trajectory, and often came with the decision)
    const fingerprints =
      correlationId === null
        ? null
        : carried !== undefined && fingerprintsFit(carried, prompt.length)
          ? carried
          : prefixFingerprints(hashed);
    const previous = correlationId === null ? undefined : this.#trajectories.get(correlationId);
    const shared =
      previous === undefined || fingerprints === null ? 0 : sharedPrefixTokens(previous.fingerprints, fingerprints);
    const router = new Map<HashAlgo, BigUint64Array>();
    for (const algo of algos) {
      const before =
        previous !== undefined && previous.routerTokensPerBlock === tpb ? previous.router.get(algo) : undefined;
      router.set(algo, extendKeyChain(hashed, tpb, algo, before, shared));
    }
    const worker = new Map<string, BigUint64Array>();
    for (const [id, { algo, size }] of workerSpecs) {
      // same chunking as the router's: reuse its keys instead of hashing the prompt twice
      worker.set(
        id,
        size === tpb ? router.get(algo)! : extendKeyChain(hashed, size, algo, previous?.worker.get(id), shared),
      );
    }
    if (correlationId !== null && fingerprints !== null)
      this.#trajectories.set(correlationId, { fingerprints, routerTokensPerBlock: tpb, router, worker });
    return { hashedTokens: hashed.length, routerTokensPerBlock: tpb, router, worker };
  }
}
