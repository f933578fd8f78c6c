// The sticky ideal bounded by what each worker can hold (issue 23 item 9), and turn scatter judged by the same
// oracle (issue 24 item 6), from hand-built observations: events off (relay polls, nothing drained), one conversation
// per correlation id, 128-token blocks.
import { describe, expect, it } from 'vitest';
import { created, removed, stored } from '../../../test/helpers/kv-event-builders.js';
import type { Observation } from '../observe/observation.js';
import type { KvEvent } from '../wire/kv-event.js';
import { createSentinelState, type SentinelState } from './sentinel-state.js';

const BLOCK = 128;

/** `kvCapacityBlocks`: the operator's kv_capacity_blocks by server, applied as the daemon applies them */
function relayState(kvCapacityBlocks: Readonly<Record<string, number>> = {}): SentinelState {
  const state = createSentinelState({ mode: 'relay' });
  for (const server of ['ctx0', 'ctx1'])
    state.apply({ kind: 'server-info', ts: 0, server, hashAlgo: 'v1_block_key', tokensPerBlock: BLOCK });
  for (const [server, blocks] of Object.entries(kvCapacityBlocks))
    state.apply({ kind: 'server-info', ts: 0, server, hashAlgo: null, tokensPerBlock: null, kvCapacityBlocks: blocks });
  return state;
}

let seq = 0;
/** one CTX request and its answer: `prompt` tokens, `cached` of them reused */
function turn(state: SentinelState, ts: number, conv: string, server: string, prompt: number, cached: number): void {
  const requestId = `r${++seq}`;
  const decision: Observation = {
    kind: 'decision',
    ts,
    requestId,
    correlationId: conv,
    server,
    promptTokens: null,
    promptTokenCount: prompt,
    inflight: null,
  };
  state.apply(decision);
  state.apply({
    kind: 'outcome',
    ts: ts + 1,
    requestId,
    server,
    ok: true,
    promptTokens: prompt,
    cachedTokens: cached,
    latencyMs: 10,
  });
}

/** conversation a: a first turn of 1000 tokens on ctx0 (nothing reused), then its second on `server` */
function secondTurnOn(server: string, prompt: number, cached: number): SentinelState {
  const state = relayState();
  turn(state, 100, 'a', 'ctx0', 1000, 0);
  turn(state, 200, 'a', server, prompt, cached);
  return state;
}

const decisions = (state: SentinelState) => state.diagnosisInput(10_000).decisions;

describe('the sticky ideal, bounded by capacity', () => {
  it('a turn back on its server counts what that server reused, not its earlier turn (capacity evicted it there)', () => {
    // back on ctx0, but ctx0 had evicted the first turn: the router did the best sticky routing can
    const d = decisions(secondTurnOn('ctx0', 2000, 256));
    expect(d.stickyIdealCachedTokens).toBe(256);
    expect(d.stickyIdealMovedTurns).toBe(0);
  });

  it('a turn that moved gets its earlier turn back only while its server stored less than it can hold since', () => {
    // ctx0 holds 10 blocks (1280 tokens), as the operator states it
    const state = relayState({ ctx0: 10 });
    turn(state, 100, 'a', 'ctx0', 1000, 0);
    turn(state, 110, 'b', 'ctx0', 1000, 0);
    turn(state, 120, 'c', 'ctx0', 200, 0);
    // a moves to ctx1: since a's first turn ctx0 stored 1200 tokens (< 1280): a's turn could still be there
    turn(state, 200, 'a', 'ctx1', 1500, 0);
    expect(decisions(state).stickyIdealCachedTokens).toBe(1000);
    // b moves too: since b's turn ctx0 stored 200 more… and then 1100 of d's: 1300 ≥ 1280, b's turn is gone
    turn(state, 210, 'd', 'ctx0', 1100, 0);
    turn(state, 300, 'b', 'ctx1', 1500, 0);
    const d = decisions(state);
    expect(d.stickyIdealCachedTokens).toBe(1000);
    expect([d.stickyIdealMovedTurns, d.stickyIdealEvictedTurns, d.stickyIdealUnboundedTurns]).toEqual([2, 1, 0]);
    expect(state.diagnosisInput(10_000).servers.find((s) => s.server === 'ctx0')?.kvCapacity).toEqual({
      blocks: 10,
      from: 'configuration',
    });
  });

  it('without a stated capacity a moved turn is unbounded, and the evidence says so', () => {
    const state = secondTurnOn('ctx1', 1500, 0);
    const d = decisions(state);
    expect(d.stickyIdealCachedTokens).toBe(1000);
    expect(d.stickyIdealUnboundedTurns).toBe(1);
    expect(state.diagnosisInput(10_000).servers[0]!.kvCapacity).toBeNull();
  });

  it('capacity from the created event (every level and rank), else the peak residency once the table evicts', () => {
    const state = createSentinelState({ mode: 'relay' });
    const drain = (server: string, ts: number, events: KvEvent[]) =>
      state.apply({ kind: 'worker-events', ts, server, firstSeq: 0, events });
    drain('ctx0', 1, [created([8192, 1024], { eventId: 0, rank: 0 }), created([8192, 1024], { eventId: 0, rank: 1 })]);
    drain('ctx1', 1, [stored([1n, 2n, 3n], { eventId: 0 })]);
    const capacity = () => state.diagnosisInput(10).servers.map((s) => s.kvCapacity);
    // ctx1 never evicted: what it holds says nothing of what it can hold
    expect(capacity()).toEqual([{ blocks: 18_432, from: 'created event' }, null]);
    drain('ctx1', 2, [removed([1n], { eventId: 1 }), stored([4n], { eventId: 2 })]);
    expect(capacity()[1]).toEqual({ blocks: 3, from: 'observed peak residency' });
  });
});

describe('turn scatter judged by the oracle', () => {
  it('a scattered turn whose earlier turn its server no longer held is not avoidable; one it still held is', () => {
    const state = relayState({ ctx0: 10 });
    turn(state, 100, 'a', 'ctx0', 1000, 0);
    turn(state, 110, 'filler', 'ctx0', 1300, 0);
    // a moved and got nothing: ctx0 had stored 1300 ≥ 1280 tokens since, so going back would not have helped
    turn(state, 200, 'a', 'ctx1', 1500, 0);
    let d = decisions(state);
    expect([d.scattered, d.avoidableScattered, d.avoidableScatterLostTokens]).toEqual([1, 0, 0]);
    // b moved while its turn was still on ctx0: avoidable, and it cost its earlier turn's tokens
    turn(state, 300, 'b', 'ctx0', 800, 0);
    turn(state, 400, 'b', 'ctx1', 1200, 100);
    d = decisions(state);
    expect([d.scattered, d.avoidableScattered, d.avoidableScatterLostTokens]).toEqual([2, 1, 700]);
    expect(d.followupPromptTokens).toBe(2700);
    // a turn back on its server that found its prefix evicted is scatter no routing could avoid
    turn(state, 500, 'b', 'ctx1', 2000, 0);
    d = decisions(state);
    expect([d.scattered, d.avoidableScattered]).toEqual([3, 1]);
  });
});
