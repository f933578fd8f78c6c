// What a configuration states of the deployment, as the observations a bundle records: the router's settings and
// servers, and the workers' capacity the operator gives.
import type { Observation } from '../../core/observe/observation.js';
import type { Clock } from '../../sources/ports.js';
import type { ServeConfig } from '../config/serve-config.js';

export function configObservations(c: ServeConfig, clock: Clock): Observation[] {
  const facts = c.router;
  return [
    {
      kind: 'router-config',
      ts: clock(),
      source: 'config',
      routerType: facts.type,
      tokensPerBlock: facts.tokensPerBlock,
      maxBatchSize: facts.maxBatchSize,
      backfillBlockHashesOnFinish: facts.backfillBlockHashesOnFinish,
      servers: [...new Set([...c.relays.map((r) => r.id), ...c.ctx.map((x) => x.id), ...c.zmq.map((z) => z.id)])],
      profile: facts.profile,
      trackRoutedBlocks: facts.trackRoutedBlocks,
      loadWeight: facts.loadWeight,
      readsEvents: facts.readsEvents,
    },
    ...Object.entries(c.kvCapacityBlocks).map(([server, blocks]): Observation => ({
      kind: 'server-info',
      ts: clock(),
      server,
      hashAlgo: null,
      tokensPerBlock: null,
      kvCapacityBlocks: blocks,
    })),
  ];
}
