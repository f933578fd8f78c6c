// What the deployment states or shows of itself, the latest of each: the router's settings (its config, debug
// endpoint or log) and each server's hashing context (/server_info, its events: algorithm, block size). The
// digester reads it to compute keys; the reducers and projections read the router's and servers' facts here.
// Updated from the observation sequence, the same live and in `kvsentinel record`, so both digest alike.
import { routerChunkSize, statedRouterBlockSize, type RouterBlockSize } from '../diagnosis/router-block-size.js';
import type { Observation, RouterEventRead, RouterProfile } from '../observe/observation.js';
import type { HashAlgo } from '../wire/kv-event.js';
import type { StoredEventCheck } from './hash-verifier.js';

export const DEFAULT_HASH_ALGO: HashAlgo = 'v1_block_key';

export interface RouterSettings {
  readonly routerType: string | null;
  /** the router's tokens_per_block as the latest source stating it said (null while none did) */
  readonly blockSize: RouterBlockSize | null;
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

const NO_ROUTER_SETTINGS: RouterSettings = {
  routerType: null,
  blockSize: null,
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

export class DeploymentFacts {
  #router: RouterSettings = NO_ROUTER_SETTINGS;
  readonly #servers = new Map<string, ServerContext>();
  #serverIds: string[] | null = null;
  /** the router's server list serverIds was computed with */
  #serverIdsListed: readonly string[] | null = null;

  get router(): RouterSettings {
    return this.#router;
  }

  routerTokensPerBlock(): number {
    return routerChunkSize(this.#router.blockSize);
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

  /** A server is named by an observation: it is one of the deployment's from now on. */
  touch(server: string): void {
    this.#server(server);
  }

  /**
   * Updates the facts from an observation; `stored`: the digest's checks of a worker-events observation (their
   * token counts say the block size of re-keyed streams).
   */
  observe(obs: Observation, stored: readonly (StoredEventCheck | null)[] | null): void {
    switch (obs.kind) {
      case 'router-config':
        this.#router = {
          routerType: obs.routerType ?? this.#router.routerType,
          blockSize: statedRouterBlockSize(obs) ?? this.#router.blockSize,
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
      case 'sidecar-stats':
        return;
    }
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
