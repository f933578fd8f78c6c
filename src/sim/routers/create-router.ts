// The router a SimConfig names.
import type { LogCall } from '../log-lines.js';
import type { RouterConfig } from '../sim-config.js';
import { ConversationRouter } from './conversation-router.js';
import { KvCacheAwareRouter, type KvCacheAwareDeps } from './kv-cache-aware-router.js';
import { NewestKvCacheAwareRouter } from './newest-kv-router.js';
import type { Router } from './router.js';
import { LoadBalancingRouter, RoundRobinRouter } from './simple-routers.js';

/** the routing settings (the orchestrator's transport settings do not change routing) */
export type RoutingConfig = Pick<
  RouterConfig,
  | 'type'
  | 'profile'
  | 'tokensPerBlock'
  | 'trackRoutedBlocks'
  | 'loadWeight'
  | 'loadCap'
  | 'maxBatchSize'
  | 'backfillBlockHashesOnFinish'
  | 'pollOnFinish'
  | 'tokenDrift'
  | 'eventMatchDiag'
>;

export interface CreateRouterDeps extends KvCacheAwareDeps {
  /** the worker's tokens_per_block from /server_info (the newest router adopts or checks it) */
  readonly workerTokensPerBlock?: (server: string) => number | null;
  /** orchestrator log lines the router writes while routing (the newest router's EVENT_MATCH_DIAG) */
  readonly log?: (level: 'I' | 'W' | 'E', message: string) => void;
}

export function createRouter(config: RoutingConfig, servers: readonly string[], deps: CreateRouterDeps): Router {
  switch (config.type) {
    case 'round_robin':
      return new RoundRobinRouter(servers);
    case 'load_balancing':
      return new LoadBalancingRouter(servers);
    case 'conversation':
      return new ConversationRouter(servers);
    case 'kv_cache_aware':
      if (config.profile === 'newest') {
        return new NewestKvCacheAwareRouter(
          servers,
          {
            tokensPerBlock: config.tokensPerBlock === 0 ? null : config.tokensPerBlock,
            maxBatchSize: config.maxBatchSize,
            trackRoutedBlocks: config.trackRoutedBlocks ?? true,
            loadWeight: config.loadWeight ?? 0.25,
            loadCap: config.loadCap === undefined || config.loadCap === 0 ? Number.POSITIVE_INFINITY : config.loadCap,
            pollOnFinish: config.pollOnFinish,
            eventMatchDiag: config.eventMatchDiag === true,
          },
          { ...deps, workerTokensPerBlock: deps.workerTokensPerBlock ?? (() => null) },
        );
      }
      return new KvCacheAwareRouter(
        servers,
        {
          // unset: the 2026-06 router's default
          tokensPerBlock: config.tokensPerBlock === 0 ? 32 : config.tokensPerBlock,
          maxBatchSize: config.maxBatchSize,
          backfillBlockHashesOnFinish: config.backfillBlockHashesOnFinish,
          pollOnFinish: config.pollOnFinish,
        },
        deps,
      );
  }
}

/** What the router logs once it prepared its servers (the newest router's adoption and mismatch lines). */
export function routerStartupLines(router: Router): readonly LogCall[] {
  return router instanceof NewestKvCacheAwareRouter ? router.startupLines : [];
}

/** Whether finish_request polls the server's events. */
export function routerPolls(router: Router, server: string): boolean {
  if (router instanceof NewestKvCacheAwareRouter) return router.polls(server);
  return router.settings.type === 'kv_cache_aware' && router.settings.pollOnFinish === true;
}
