// The router a SimConfig names.
import type { RouterConfig } from '../sim-config.js';
import { ConversationRouter } from './conversation-router.js';
import { KvCacheAwareRouter, type KvCacheAwareDeps } from './kv-cache-aware-router.js';
import type { Router } from './router.js';
import { LoadBalancingRouter, RoundRobinRouter } from './simple-routers.js';

export function createRouter(config: RouterConfig, servers: readonly string[], deps: KvCacheAwareDeps): Router {
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
