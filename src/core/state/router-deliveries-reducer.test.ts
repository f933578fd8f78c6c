import { describe, expect, it } from 'vitest';
import { harnessModel, prompt, storedEvent, totalOf } from '../../../test/helpers/state-harness.js';
import { counterKey } from './counter-schema.js';
import { RouterDeliveriesReducer } from './router-deliveries-reducer.js';
import type { StateModel } from './state-model.js';

function poll(router: RouterDeliveriesReducer, server: string, fromSeq: number, toSeq: number, dropped = 0): void {
  router.routerPoll({ kind: 'router-poll', ts: 3_000, server, consumer: 'router', fromSeq, toSeq, dropped });
}

/** what a relay buffered of a drain: seq 0.. for each event */
function buffered(model: StateModel, server: string, blocks: number[]): void {
  const relay = model.relayOf(server);
  blocks.forEach((n, seq) => relay.push(seq, storedEvent(prompt(n, 0, 100 * (seq + 1)), seq)));
}

describe('RouterDeliveriesReducer', () => {
  it('the events a poll delivered enter the replica then, each once; the poll and its losses are counted', () => {
    const model = harnessModel();
    const router = new RouterDeliveriesReducer(model);
    buffered(model, 'ctx0', [2, 3]);
    poll(router, 'ctx0', 0, 1);
    expect(model.replica.blockCount('ctx0')).toBe(2);
    poll(router, 'ctx0', 1, 2, 5);
    poll(router, 'ctx0', 2, 2);
    expect(model.replica.blockCount('ctx0')).toBe(5);
    expect(totalOf(model, counterKey('routerPolls', 'ctx0'))).toBe(3);
    expect(totalOf(model, counterKey('eventsDeliveredToRouter', 'ctx0'))).toBe(2);
    expect(totalOf(model, counterKey('eventsDroppedForConsumers', 'ctx0'))).toBe(5);
    expect(model.paths.seesRouterPolls).toBe(true);
  });

  it("a poll clears what the server's stream put in the replica: the router's table comes from the pull path", () => {
    const model = harnessModel();
    const router = new RouterDeliveriesReducer(model);
    model.paths.workerEvents('ctx1', { engine: 'vllm', hashes: 'native' });
    model.paths.fillReplicaFromStream('ctx1');
    model.replica.apply('ctx1', storedEvent(prompt(4)));
    poll(router, 'ctx1', 0, 0);
    expect(model.replica.blockCount('ctx1')).toBe(0);
  });

  it('the debug endpoint is seen once it delivered its state or a score', () => {
    const byState = new RouterDeliveriesReducer(harnessModel());
    expect(byState.seesRouterDebug).toBe(false);
    byState.routerState({
      kind: 'router-state',
      ts: 1,
      server: 'ctx0',
      blockTableSize: 7,
      activeRequests: 1,
      polls: 3,
      pollFailures: 0,
      hashAlgo: null,
    });
    expect(byState.seesRouterDebug).toBe(true);
    expect(byState.factsOf('ctx0').routerState).toMatchObject({ blockTableSize: 7, polls: 3 });
    const byScore = new RouterDeliveriesReducer(harnessModel());
    byScore.routerScore();
    expect(byScore.seesRouterDebug).toBe(true);
  });

  it("keeps the router log's facts of a server: polling skipped, and the latest match diagnostics", () => {
    const model = harnessModel();
    const router = new RouterDeliveriesReducer(model);
    router.routerServerFact({
      kind: 'router-server-fact',
      ts: 1,
      server: 'ctx0',
      fact: 'polling-skipped',
      routerTokensPerBlock: 32,
      workerTokensPerBlock: 4,
      divisible: true,
    });
    expect(router.factsOf('ctx0').pollingSkipped).toEqual({
      routerTokensPerBlock: 32,
      workerTokensPerBlock: 4,
      divisible: true,
    });
    for (const [totalMatch, eventMatch] of [
      [3, 0],
      [2, 2],
    ])
      router.routerServerFact({
        kind: 'router-server-fact',
        ts: 2,
        server: 'ctx0',
        fact: 'event-match',
        totalMatch: totalMatch!,
        eventMatch: eventMatch!,
        eventBlocks: 10 * eventMatch!,
        totalBlocks: 20,
      });
    expect(totalOf(model, counterKey('eventMatchDiagCalls', 'ctx0'))).toBe(2);
    expect(totalOf(model, counterKey('eventMatchDiagTotalMatched', 'ctx0'))).toBe(2);
    expect(totalOf(model, counterKey('eventMatchDiagEventMatched', 'ctx0'))).toBe(1);
    expect(router.factsOf('ctx0')).toMatchObject({ eventBlocks: 20, totalBlocks: 20 });
  });
});
