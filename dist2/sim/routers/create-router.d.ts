import type { RouterConfig } from '../sim-config.js';
import { type KvCacheAwareDeps } from './kv-cache-aware-router.js';
import type { Router } from './router.js';
export declare function createRouter(config: RouterConfig, servers: readonly string[], deps: KvCacheAwareDeps): Router;
