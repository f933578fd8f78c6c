// Turns the token-bearing parts of observations into what the joins need, so prompts never have to leave the
// process: per decision the router-style block keys (router tokens_per_block, each server's algorithm, last token
// excluded, partial tail) and the worker-style keys (worker block size), per stored event the hash checks and block
// token counts. The state computes digests itself from live observations; `kvsentinel record` computes the same
// digests at record time and writes them to the bundle instead of token ids. Both feed this class the same
// observation sequence, so the context (router settings, server algorithms, block sizes) — and therefore the
// digests — are identical.
import { routerHashedTokens } from '../hashing/router-chunking.js';
import type { Observation, RouterEventRead, RouterProfile } from '../observe/observation.js';
import { HASH_ALGOS, type HashAlgo, type KvEvent } from '../wire/kv-event.js';
import { HashVerifier, type StoredEventCheck } from './hash-verifier.js';
import { extendKeyChain, fingerprintsFit, prefixFingerprints, sharedPrefixTokens } from './incremental-keys.js';
import { LruMap } from './lru-map.js';
import { DEFAULT_ROUTER_TOKENS_PER_BLOCK } from '../diagnosis/router-defaults.js';

export const DEFAULT_HASH_ALGO: HashAlgo = 'v1_block_key';

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

export interface RouterSettings {
  readonly routerType: string | null;
  readonly tokensPerBlock: number | null;
  /** the source that stated tokensPerBlock (null while none did) */
  readonly tokensPerBlockFrom: string | null;
  readonly maxBatchSize: number | null;
  readonly backfillBlockHashesOnFinish: boolean | null;
  readonly servers: readonly string[] | null;
  readonly source: string | null;
  /** which router.py runs, and the source that said so (null while none did) */
  readonly profile: RouterProfile | null;
  readonly profileFrom: string | null;
  readonly trackRoutedBlocks: boolean | null;
  readonly loadWeight: number | null;
  readonly loadCap: number | null;
  readonly readsEvents: RouterEventRead | null;
}

interface ServerContext {
  advertisedAlgo: HashAlgo | null;
  eventAlgo: HashAlgo | null;
  advertisedBlockSize: number | null;
  /** longest stored block seen: the block size (partial tails are shorter) */
  inferredBlockSize: number | null;
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
  #router: RouterSettings = {
    routerType: null,
    tokensPerBlock: null,
    tokensPerBlockFrom: null,
    maxBatchSize: null,
    backfillBlockHashesOnFinish: null,
    servers: null,
    source: null,
    profile: null,
    profileFrom: null,
    trackRoutedBlocks: null,
    loadWeight: null,
    loadCap: null,
    readsEvents: null,
  };
  readonly #servers = new Map<string, ServerContext>();
  #serverIds: string[] | null = null;
  /** the router's server list serverIds was computed with */
  #serverIdsListed: readonly string[] | null = null;
  readonly #verifier = new HashVerifier();
  readonly #trajectories: LruMap<string, TrajectoryKeys>;

  constructor(incrementalTrajectories = DEFAULT_INCREMENTAL_TRAJECTORIES) {
    this.#trajectories = new LruMap(incrementalTrajectories);
  }

  get router(): RouterSettings {
    return this.#router;
  }

  /** entries its bounded caches dropped: trajectories' last keys (LRU), full v2 keys of the hash verifier (LRU) */
  get evicted(): { readonly incrementalKeys: number; readonly v2Keys: number } {
    return { incrementalKeys: this.#trajectories.dropped, v2Keys: this.#verifier.v2KeysEvicted };
  }

  routerTokensPerBlock(): number {
    return this.#router.tokensPerBlock ?? DEFAULT_ROUTER_TOKENS_PER_BLOCK;
  }

  /** Servers in stable order: the router's list first, then every other server seen. */
  serverIds(): string[] {
    // asked on every decision: cached until a server appears or the router's list changes
    if (this.#serverIds === null || this.#serverIdsListed !== this.#router.servers) {
      const listed = this.#router.servers ?? [];
      const rest = [...this.#servers.keys()].filter((s) => !listed.includes(s)).sort();
      this.#serverIds = [...listed, ...rest];
      this.#serverIdsListed = this.#router.servers;
    }
    return this.#serverIds.slice();
  }

  /** The algorithm the router hashes with for the server: /server_info, else its events, else v1_block_key. */
  hashAlgoOf(server: string): HashAlgo {
    const ctx = this.#servers.get(server);
    return ctx?.advertisedAlgo ?? ctx?.eventAlgo ?? DEFAULT_HASH_ALGO;
  }

  /** The algorithm /server_info states, null when it never did. */
  advertisedHashAlgo(server: string): HashAlgo | null {
    return this.#servers.get(server)?.advertisedAlgo ?? null;
  }

  advertisedBlockSize(server: string): number | null {
    return this.#servers.get(server)?.advertisedBlockSize ?? null;
  }

  inferredBlockSize(server: string): number | null {
    return this.#servers.get(server)?.inferredBlockSize ?? null;
  }

  /** The worker's KV block size: /server_info, else inferred from stored blocks, else null. */
  blockSizeOf(server: string): number | null {
    const ctx = this.#servers.get(server);
    return ctx?.advertisedBlockSize ?? ctx?.inferredBlockSize ?? null;
  }

  /** Computes the digest of an observation from its tokens (null when it has none to digest). */
  digest(obs: Observation): ObservationDigest | null {
    if (obs.kind === 'decision') {
      if (obs.promptTokens === null) return null;
      this.#server(obs.server);
      return {
        kind: 'decision',
        keys: this.#decisionKeys(obs.promptTokens, obs.correlationId, obs.promptFingerprints),
      };
    }
    if (obs.kind === 'outcome') {
      const tokens = obs.workerPromptTokens;
      if (tokens === null || tokens === undefined || tokens.length === 0) return null;
      this.#server(obs.server);
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

  /** Updates the context from an observation (after digesting it). */
  observe(obs: Observation, digest: ObservationDigest | null): void {
    switch (obs.kind) {
      case 'router-config':
        this.#router = {
          routerType: obs.routerType ?? this.#router.routerType,
          tokensPerBlock: obs.tokensPerBlock ?? this.#router.tokensPerBlock,
          tokensPerBlockFrom: obs.tokensPerBlock !== null ? obs.source : this.#router.tokensPerBlockFrom,
          maxBatchSize: obs.maxBatchSize ?? this.#router.maxBatchSize,
          backfillBlockHashesOnFinish: obs.backfillBlockHashesOnFinish ?? this.#router.backfillBlockHashesOnFinish,
          servers: obs.servers ?? this.#router.servers,
          source: obs.source,
          profile: obs.profile ?? this.#router.profile,
          profileFrom: obs.profile !== undefined && obs.profile !== null ? obs.source : this.#router.profileFrom,
          trackRoutedBlocks: obs.trackRoutedBlocks ?? this.#router.trackRoutedBlocks,
          loadWeight: obs.loadWeight ?? this.#router.loadWeight,
          loadCap: obs.loadCap ?? this.#router.loadCap,
          readsEvents: obs.readsEvents ?? this.#router.readsEvents,
        };
        for (const s of obs.servers ?? []) this.#server(s);
        return;
      case 'server-info': {
        const ctx = this.#server(obs.server);
        if (obs.hashAlgo !== null) ctx.advertisedAlgo = obs.hashAlgo;
        if (obs.tokensPerBlock !== null && obs.tokensPerBlock > 0) ctx.advertisedBlockSize = obs.tokensPerBlock;
        return;
      }
      case 'worker-events': {
        const ctx = this.#server(obs.server);
        const stored = digest?.kind === 'worker-events' ? digest.digest.stored : null;
        obs.events.forEach((event, i) => {
          if (event.hashAlgo !== null) ctx.eventAlgo = event.hashAlgo;
          if (event.data.type !== 'stored') return;
          const counts = stored?.[i]?.tokenCounts ?? event.data.blocks.map((b) => b.tokens.length);
          for (const n of counts)
            if (n > 0 && (ctx.inferredBlockSize === null || n > ctx.inferredBlockSize)) ctx.inferredBlockSize = n; // a block without tokens says nothing about the size
        });
        return;
      }
      case 'stream-sequence':
      case 'decision':
      case 'outcome':
      case 'render-check':
      case 'router-state':
      case 'router-poll':
      case 'router-score':
      case 'poll-failure':
      case 'source-health':
      case 'router-server-fact':
        if ('server' in obs) this.#server(obs.server);
        return;
      case 'sidecar-load':
        return;
    }
  }

  #checkStored(server: string, event: KvEvent): StoredEventCheck | null {
    if (event.data.type !== 'stored') return null;
    const algo = event.hashAlgo ?? this.#servers.get(server)?.advertisedAlgo ?? DEFAULT_HASH_ALGO;
    return this.#verifier.check(event.data.parentHash, event.data.blocks, algo);
  }

  #decisionKeys(prompt: Uint32Array, correlationId: string | null, carried: Uint32Array | undefined): DecisionKeys {
    const tpb = this.routerTokensPerBlock();
    const algos = new Set<HashAlgo>();
    const workerSpecs = new Map<string, { algo: HashAlgo; size: number }>();
    for (const server of this.serverIds()) {
      const algo = this.hashAlgoOf(server);
      algos.add(algo);
      const size = this.blockSizeOf(server);
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

  #server(server: string): ServerContext {
    let ctx = this.#servers.get(server);
    if (!ctx) {
      ctx = { advertisedAlgo: null, eventAlgo: null, advertisedBlockSize: null, inferredBlockSize: null };
      this.#servers.set(server, ctx);
      this.#serverIds = null;
    }
    return ctx;
  }
}
