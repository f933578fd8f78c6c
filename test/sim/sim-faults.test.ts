// One mechanism test per fault knob, on a small cluster run in virtual time with kvsentinel's relay tap.
import { describe, expect, it } from 'vitest';
import { routerWireHashes } from '../../src/core/hashing/index.js';
import type { Observation } from '../../src/core/observe/observation.js';
import type { KvEvent } from '../../src/core/wire/kv-event.js';
import { runVirtual, type RunVirtualOptions, type SimResult } from '../../src/sim/run-virtual.js';
import { presetConfig } from '../../src/sim/sim-config.js';

// small but complete: 3 CTX servers × attention-DP 4, events on, aligned block sizes, no stalls
const SMALL = [
  'workload.concurrency=12',
  'workload.trajectories=24',
  'workload.turns_min=3',
  'workload.turns_max=6',
  'workload.system_prefix_tokens=600',
  'workload.task_tokens_median=300',
  'workload.tool_tokens_median=150',
  'workload.tool_big_probability=0',
  'ctx.stall_every=0',
  'ctx.event_buffer_max_size=10000',
  'router.tokens_per_block=128',
];

interface Run {
  result: SimResult;
  observations: Observation[];
  logs: string[];
}

function run(overrides: string[], options: Partial<RunVirtualOptions> = {}): Run {
  const observations: Observation[] = [];
  const logs: string[] = [];
  const result = runVirtual(presetConfig('seed', [...SMALL, ...overrides]), {
    onObservation: (o) => observations.push(o),
    orchestratorLog: (line) => logs.push(line),
    ...options,
  });
  return { result, observations, logs };
}

function workerEvents(observations: Observation[]): KvEvent[] {
  return observations.flatMap((o) => (o.kind === 'worker-events' ? [...o.events] : []));
}

function storedHashes(events: KvEvent[]): Set<bigint | string> {
  const hashes = new Set<bigint | string>();
  for (const e of events) if (e.data.type === 'stored') for (const b of e.data.blocks) hashes.add(b.blockHash);
  return hashes;
}

function scores(observations: Observation[]): Extract<Observation, { kind: 'router-score' }>[] {
  return observations.filter((o): o is Extract<Observation, { kind: 'router-score' }> => o.kind === 'router-score');
}

/** per (server, rank): event ids in the order the relay drained them */
function idsByStream(observations: Observation[]): Map<string, number[]> {
  const streams = new Map<string, number[]>();
  for (const o of observations) {
    if (o.kind !== 'worker-events') continue;
    for (const e of o.events) {
      const key = `${o.server}/${e.attentionDpRank}`;
      const list = streams.get(key) ?? [];
      list.push(e.eventId!);
      streams.set(key, list);
    }
  }
  return streams;
}

/** a fresh worker's stream starts at event_id 0 and counts up by one (0 again = restart) */
function hasGap(ids: number[]): boolean {
  return ids.some((id, i) => id !== 0 && id !== (i === 0 ? 0 : ids[i - 1]! + 1));
}

const healthy = run([]);

describe('healthy small cluster (events on, block sizes aligned)', () => {
  it('the relay sees a created event with event_id 0 from every rank first, ids consecutive, and the router matches', () => {
    const streams = idsByStream(healthy.observations);
    expect(streams.size).toBe(12);
    for (const ids of streams.values()) {
      expect(ids[0]).toBe(0);
      expect(hasGap(ids)).toBe(false);
    }
    const first = workerEvents(healthy.observations).find((e) => e.attentionDpRank === 0);
    expect(first?.data.type).toBe('created');
    expect(healthy.result.servers.every((s) => (s.routerBlockTableSize ?? 0) > 0)).toBe(true);
    expect(scores(healthy.observations).some((s) => s.candidates.some((c) => c.matchedTokens > 0))).toBe(true);
    expect(healthy.result.failed_requests).toBe(0);
  });

  it('router hashes of a served prompt (tokens_per_block 128) equal the stored block hashes', () => {
    const stored = storedHashes(workerEvents(healthy.observations));
    const decision = healthy.observations.find((o) => o.kind === 'decision');
    if (decision?.kind !== 'decision' || decision.promptTokens === null) throw new Error('no decision with tokens');
    for (const hash of routerWireHashes(decision.promptTokens, 128, 'v1_block_key'))
      expect(stored.has(hash)).toBe(true);
  });
});

describe('fault knobs', () => {
  it('ctx.event_buffer_max_size=0: every drain returns [] and the router table stays empty', () => {
    const { result, observations } = run(['ctx.event_buffer_max_size=0']);
    expect(workerEvents(observations)).toEqual([]);
    const polls = observations.filter((o) => o.kind === 'router-poll');
    expect(polls.length).toBeGreaterThan(0);
    expect(polls.every((p) => p.kind === 'router-poll' && p.toSeq === p.fromSeq)).toBe(true);
    expect(result.servers.every((s) => s.routerBlockTableSize === 0 && s.eventsEmitted === 0 && s.drains > 0)).toBe(
      true,
    );
    expect(scores(observations).every((s) => s.candidates.every((c) => c.matchedTokens === 0))).toBe(true);
    expect(result.faults).toContain('ctx.event_buffer_max_size=0');
  });

  it('ctx.kv_events_push=true: the workers emit (ids used) but the pull path returns []', () => {
    const { result, observations } = run(['ctx.kv_events_push=true']);
    expect(workerEvents(observations)).toEqual([]);
    expect(
      result.servers.every((s) => s.eventsEmitted > 0 && s.eventsDrained === 0 && s.routerBlockTableSize === 0),
    ).toBe(true);
  });

  it('ctx.competing_consumer=true: the relay sees event_id gaps and the router table is smaller', () => {
    const { result, observations } = run(['ctx.competing_consumer=true']);
    const streams = idsByStream(observations);
    expect([...streams.values()].some(hasGap)).toBe(true);
    const table = (r: SimResult): number => r.servers.reduce((n, s) => n + (s.routerBlockTableSize ?? 0), 0);
    expect(table(result)).toBeLessThan(table(healthy.result));
  });

  it('router.tokens_per_block=32: router hashes never equal stored ones, matched tokens are always 0', () => {
    const { observations } = run(['router.tokens_per_block=32']);
    const stored = storedHashes(workerEvents(observations));
    expect(stored.size).toBeGreaterThan(0);
    for (const o of observations) {
      if (o.kind !== 'decision' || o.promptTokens === null) continue;
      for (const hash of routerWireHashes(o.promptTokens, 32, 'v1_block_key')) expect(stored.has(hash)).toBe(false);
    }
    expect(scores(observations).every((s) => s.candidates.every((c) => c.matchedTokens === 0))).toBe(true);
  });

  it('router.token_drift=true: same sizes and algorithm, yet nothing the router hashes is ever stored', () => {
    const { result, observations } = run(['router.token_drift=true']);
    expect(result.servers.every((s) => (s.routerBlockTableSize ?? 0) > 0)).toBe(true);
    expect(scores(observations).every((s) => s.candidates.every((c) => c.matchedTokens === 0))).toBe(true);
    // the worker's own tokens do hash to stored blocks: only the router's view differs
    const stored = storedHashes(workerEvents(observations));
    const decision = observations.find((o) => o.kind === 'decision');
    if (decision?.kind !== 'decision' || decision.promptTokens === null) throw new Error('no decision');
    expect(routerWireHashes(decision.promptTokens, 128, 'v1_block_key').some((h) => stored.has(h))).toBe(true);
  });

  it('ctx.adp_gather_drop=true: only attention_dp_rank 0 ever arrives', () => {
    const { observations } = run(['ctx.adp_gather_drop=true']);
    const ranks = new Set(workerEvents(observations).map((e) => e.attentionDpRank));
    expect([...ranks]).toEqual([0]);
    expect(
      healthy.observations.some((o) => o.kind === 'worker-events' && o.events.some((e) => e.attentionDpRank === 3)),
    ).toBe(true);
  });

  it('router.poll_on_finish=false: the router never polls, its table stays empty, the relay still drains', () => {
    const { result, observations } = run(['router.poll_on_finish=false']);
    expect(observations.filter((o) => o.kind === 'router-poll')).toEqual([]);
    expect(workerEvents(observations).length).toBeGreaterThan(0);
    expect(result.servers.every((s) => s.routerBlockTableSize === 0 && s.routerPolls === 0)).toBe(true);
  });

  it('ctx.restart_at: ctx0 restarts, its event ids start over at 0, the relay answers polls from its buffer while it is down, requests are retried', () => {
    const restart = ['ctx.restart_at=1s', 'ctx.restart_downtime=2s'];
    const { result, observations, logs } = run(restart);
    const ids = idsByStream(observations).get('ctx0/0')!;
    const restartAt = ids.indexOf(0, 1);
    expect(restartAt).toBeGreaterThan(0);
    // the real relay answers a poll whose drain failed from what it holds (relay-event-path.ts): the router's polls
    // through it never fail, and the relay's own source reports the worker down
    expect(result.servers[0]!.routerPollFailures).toBe(0);
    expect(logs.some((l) => l.includes('[W] [serve   ] Failed to poll KV cache events from ctx0: '))).toBe(false);
    const down = observations.filter((o) => o.kind === 'source-health' && o.source === 'relay:ctx0' && !o.up);
    expect(down.length).toBeGreaterThan(0);
    expect(result.trajectories).toBe(24);
    expect(result.faults.some((f) => f.startsWith('ctx.restart_at='))).toBe(true);
    // without the relay the router polls the worker itself, and those polls fail while it is down
    const direct = run(restart, { tap: 'watch' });
    expect(direct.result.servers[0]!.routerPollFailures).toBeGreaterThan(0);
    expect(direct.logs.some((l) => l.includes('[W] [serve   ] Failed to poll KV cache events from ctx0: '))).toBe(true);
  });
});

describe('determinism and logs', () => {
  it('same seed, same results; another seed, other results', () => {
    const again = run([]);
    expect(again.result).toEqual(healthy.result);
    const other = run(['workload.seed=7']);
    expect(other.result.prompt_tokens).not.toBe(healthy.result.prompt_tokens);
  });

  it('writes the orchestrator config lines and a canonical request log', () => {
    const lines: string[] = [];
    const { logs, result } = run([], { requestLog: (l) => lines.push(l) });
    // the newest logger's form: module tag, router_utils' f-string, and the stock ready line that names no server
    expect(
      logs.some((l) =>
        /\[TRT-LLM\] \[I\] \[serve {3}\] BlockHashMixin: tokens_per_block=128, custom_tokenizer=None$/.test(l),
      ),
    ).toBe(true);
    expect(
      logs.some((l) =>
        l.endsWith(
          "[serve   ] server is ready with info: {'disaggregated_params': {'disaggregated_mode': 'context_only'}, 'kv_cache_hash_algo': 'v1_block_key', 'tokens_per_block': 128}",
        ),
      ),
    ).toBe(true);
    expect(lines).toHaveLength(result.requests);
    const first = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(Object.keys(first)).toEqual([
      'ts',
      'request_id',
      'correlation_id',
      'ctx_server',
      'prompt_tokens',
      'cached_tokens',
    ]);
  });

  it('watch mode: no event access, decisions come with outcomes from the request log', () => {
    const { observations } = run([], { tap: 'watch', watchDebugEndpoint: false });
    expect(
      observations.some((o) => o.kind === 'worker-events' || o.kind === 'router-poll' || o.kind === 'router-score'),
    ).toBe(false);
    const decisions = observations.filter((o) => o.kind === 'decision');
    expect(decisions.length).toBe(observations.filter((o) => o.kind === 'outcome').length);
    expect(observations.find((o) => o.kind === 'router-config')).toMatchObject({
      source: 'orchestrator-log',
      tokensPerBlock: 128,
    });
  });
});
