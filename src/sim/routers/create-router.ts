// The router a SimConfig names.
import type { RouterConfig } from '../sim-config.js';
import { ConversationRouter } from './conversation-router.js';
import { KvCacheAwareRouter, type KvCacheAwareDeps } from './kv-cache-aware-router.js';
import type { Router } from './router.js';
import { LoadBalancingRouter, RoundRobinRouter } from './simple-routers.js';

/** the routing settings (the orchestrator's transport settings do not change routing) */
export type RoutingConfig = Pick<RouterConfig, 'type' | 'tokensPerBlock' | 'maxBatchSize' | 'backfillBlockHashesOnFinish' | 'pollOnFinish' | 'tokenDrift'>;

export function createRouter(config: RoutingConfig, servers: readonly string[], deps: KvCacheAwareDeps): Router {
  switch (config.type) {
    case 'round_robin':
      return new RoundRobinRouter(servers);
    case 'load_balancing':
      return new LoadBalancingRouter(servers);
    case 'conversation':
      return new ConversationRouter(servers);
    case 'kv_cache_aware':
      return new KvCacheAwareRouter(
        servers,
        {
          tokensPerBlock: config.tokensPerBlock,
          maxBatchSize: config.maxBatchSize,
          backfillBlockHashesOnFinish: config.backfillBlockHashesOnFinish,
          pollOnFinish: config.pollOnFinish,
        },
        deps,
      );
  }
}
