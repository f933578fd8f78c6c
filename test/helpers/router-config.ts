// A router-config observation for tests: every setting unstated unless the test states it.
import type { RouterConfigObservation } from '../../src/core/observe/observation.js';

export function routerConfig(over: Partial<RouterConfigObservation> = {}): RouterConfigObservation {
  return {
    kind: 'router-config',
    ts: 0,
    source: 'config',
    routerType: null,
    tokensPerBlock: null,
    maxBatchSize: null,
    backfillBlockHashesOnFinish: null,
    servers: null,
    ...over,
  };
}
