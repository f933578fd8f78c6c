import { describe, expect, it } from 'vitest';
import { CtxWorker } from './ctx-worker.js';
import { Orchestrator } from './orchestrator.js';
import { StaticPrompt } from './prompt.js';
import { routerDebugResponse } from './router-debug.js';
import { createRouter } from './routers/create-router.js';
import { VirtualScheduler } from './scheduler.js';

function cluster(): { scheduler: VirtualScheduler; orchestrator: Orchestrator; workers: CtxWorker[] } {
  const scheduler = new VirtualScheduler();
  const workers = ['a', 'b'].map(
    (id) =>
      new CtxWorker(scheduler, {
        id,
        ranks: 2,
        blockSize: 4,
        gpuBlocksPerRank: 64,
        hostBlocksPerRank: 0,
        maxConcurrency: 1,
        prefillTokensPerSecond: 1000,
        overheadMs: 10,
        rankAssignment: 'affinity',
        hashAlgo: 'v1_block_key',
        eventBufferMaxSize: 100,
        kvEventsPush: false,
        adpGatherDrop: false,
        gatherPeriodMs: 5,
        windowSize: 4096,
        restartDowntimeMs: 100,
      }),
  );
  const byId = new Map(workers.map((w) => [w.id, w]));
  const router = createRouter(
    {
      type: 'kv_cache_aware',
      tokensPerBlock: 4,
      maxBatchSize: 64,
      backfillBlockHashesOnFinish: false,
      pollOnFinish: true,
      tokenDrift: false,
    },
    ['a', 'b'],
    {
      hashAlgo: () => 'v1_block_key',
      pollEvents: (s) => byId.get(s)!.drainEvents(),
    },
  );
  const orchestrator = new Orchestrator(scheduler, workers, router, {
    tokenDrift: false,
    genOverheadMs: 5,
    genMsPerToken: 1,
    decisionHistory: 10,
  });
  return { scheduler, orchestrator, workers };
}

describe('the orchestrator with a kv_cache_aware router', () => {
  it('sends the follow-up turn to the server holding the prefix (events flow on finish) and reports it on /debug/router', () => {
    const { scheduler, orchestrator } = cluster();
    const turn1 = Uint32Array.from({ length: 17 }, (_, i) => i + 1);
    const turn2 = Uint32Array.from({ length: 25 }, (_, i) => i + 1);
    const served: string[] = [];
    const cached: number[] = [];
    orchestrator.send(
      { requestId: 'r1', correlationId: 'c', prompt: new StaticPrompt(turn1), outputTokens: 2 },
      (r) => {
        served.push(r.server);
        orchestrator.send(
          { requestId: 'r2', correlationId: 'c', prompt: new StaticPrompt(turn2), outputTokens: 2 },
          (r2) => {
            served.push(r2.server);
            cached.push(r2.cachedTokens);
          },
        );
      },
    );
    scheduler.run();
    expect(served[1]).toBe(served[0]);
    expect(cached).toEqual([16]);
    const debug = routerDebugResponse(orchestrator, 0);
    expect(debug.router).toEqual({
      type: 'kv_cache_aware',
      tokens_per_block: 4,
      max_batch_size: 64,
      backfill_block_hashes_on_finish: false,
    });
    expect(debug.decisions.map((d) => d.request_id)).toEqual(['r1', 'r2']);
    const second = debug.decisions[1]!;
    const chosen = second.candidates.find((c) => c.server === second.chosen)!;
    expect(chosen.matched_tokens).toBe(16); // turn 1 stored 4 full blocks of tokens[0, 16)
    expect(chosen.score).toBeCloseTo(16 / 24);
    expect(debug.servers.find((s) => s.url === served[0])!.block_table_size).toBe(6); // 4 blocks of turn 1 + 2 new of turn 2
    expect(routerDebugResponse(orchestrator, 1).decisions.map((d) => d.seq)).toEqual([2]);
  });

  it('ties go round-robin when nothing is cached anywhere', () => {
    const { scheduler, orchestrator } = cluster();
    const servers: string[] = [];
    for (let i = 0; i < 4; i++) {
      orchestrator.send(
        {
          requestId: `r${i}`,
          correlationId: null,
          prompt: new StaticPrompt(Uint32Array.from([100 * i + 1, 2, 3])),
          outputTokens: 1,
        },
        (r) => servers.push(r.server),
      );
      scheduler.run();
    }
    expect(servers).toEqual(['a', 'b', 'a', 'b']);
  });
});

describe('memory of served requests', () => {
  it('a served prompt drops its memoised hashes once its CTX step finished (before the GEN step), and they recompute the same', () => {
    const { scheduler, orchestrator } = cluster();
    const tokens = Uint32Array.from({ length: 33 }, (_, i) => i + 7);
    const prompt = new StaticPrompt(tokens);
    const first = prompt.blocks(4, 'v1_block_key');
    let released = 0;
    const release = prompt.release.bind(prompt);
    prompt.release = () => {
      released++;
      release();
    };
    let done = false;
    orchestrator.send({ requestId: 'm1', correlationId: 'm', prompt, outputTokens: 2 }, () => (done = true));
    scheduler.run();
    expect(done).toBe(true);
    expect(released).toBe(1);
    const again = prompt.blocks(4, 'v1_block_key');
    expect(again).not.toBe(first); // recomputed, not kept
    expect(again.keys).toEqual(first.keys);
  });
});
