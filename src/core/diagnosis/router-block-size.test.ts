import { describe, expect, it } from 'vitest';
import { routerConfig } from '../../../test/helpers/router-config.js';
import { DeploymentFacts } from '../state/deployment-facts.js';
import { parseOrchestratorLogLine } from '../watch/orchestrator-log.js';
import { inferredRouterBlockSize, routerChunkSize, statedRouterBlockSize } from './router-block-size.js';

describe('RouterBlockSize', () => {
  it('records how the size is known: declared in config, logged by the router, adopted from a worker', () => {
    expect(statedRouterBlockSize(routerConfig({ source: 'config', tokensPerBlock: 64 }))).toEqual({
      tokens: 64,
      basis: 'declared',
      from: 'config',
    });
    expect(statedRouterBlockSize(routerConfig({ source: 'debug-endpoint', tokensPerBlock: 32 }))?.basis).toBe('logged');
    expect(
      statedRouterBlockSize(
        routerConfig({ source: 'orchestrator-log', tokensPerBlock: 128, tokensPerBlockAdopted: true }),
      ),
    ).toEqual({
      tokens: 128,
      basis: 'adopted',
      from: 'orchestrator-log',
    });
    expect(statedRouterBlockSize(routerConfig({ source: 'orchestrator-log' }))).toBeNull();
  });

  it('inferred from the routing, and the chunk size falls back to the default while unknown', () => {
    expect(inferredRouterBlockSize(64)).toEqual({ tokens: 64, basis: 'inferred', from: 'inferred' });
    expect(routerChunkSize(inferredRouterBlockSize(64))).toBe(64);
    expect(routerChunkSize(null)).toBe(32);
  });

  it("the newest router's adoption line is kept as adopted; a later statement of no size keeps it", () => {
    const facts = new DeploymentFacts();
    const lines = [
      'BlockHashMixin: tokens_per_block=32 (auto, adopts worker), custom_tokenizer=None',
      "router tokens_per_block unset: adopting worker's 64 on ctx0",
      'KvCacheAwareRouter max_batch_size=64',
    ];
    for (const line of lines) for (const o of parseOrchestratorLogLine(line, 1, (name) => name)) facts.observe(o, null);
    expect(facts.router.blockSize).toEqual({ tokens: 64, basis: 'adopted', from: 'orchestrator-log' });
    expect(facts.routerTokensPerBlock()).toBe(64);
  });
});
