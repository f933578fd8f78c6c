// The live cluster end to end on real ports: the closed-loop workload through the orchestrator, the router's applied
// events against what the workers served (exactly once, bit-identical), the debug endpoint (design.md §8), the
// request and orchestrator logs, SSE through the orchestrator, and a CTX list pointed elsewhere.
import { afterEach, describe, expect, it } from 'vitest';
import { parseKvEvents } from '../../src/core/wire/parse-kv-events.js';
import { parsePerfMetrics } from '../../src/core/wire/parse-perf-metrics.js';
import { parseUsage } from '../../src/core/wire/parse-usage.js';
import type { EventDigest } from '../../src/sim/live/event-digest.js';
import { startLiveCluster, type LiveCluster } from '../../src/sim/live/index.js';
import { get, post, smallConfig, sseEvents, tokens } from './live-helpers.js';

let cluster: LiveCluster | null = null;

afterEach(async () => {
  await cluster?.stop();
  cluster = null;
});

interface AppliedDoc {
  poll: boolean;
  parse_issues: number;
  servers: { server: string; url: string; total: number; dropped: number; events: EventDigest[] }[];
}

interface DebugDoc {
  router: Record<string, unknown>;
  servers: {
    url: string;
    active_requests: number;
    hash_algo: string | null;
    block_table_size: number | null;
    polls: number;
    poll_failures: number;
  }[];
  decisions: {
    seq: number;
    ts: number;
    request_id: string;
    correlation_id: string | null;
    chosen: string;
    candidates: { server: string; matched_tokens: number; active_requests: number; score: number }[] | null;
  }[];
}

describe('live cluster', () => {
  it('runs the workload through the orchestrator; the router applies exactly what the workers served', async () => {
    const requestLog: string[] = [];
    const orchestratorLog: string[] = [];
    cluster = await startLiveCluster(smallConfig('healthy'), {
      timeScale: 2,
      requestLog: (l) => requestLog.push(l),
      orchestratorLog: (l) => orchestratorLog.push(l),
    });
    const turns: { cachedTokensReported: boolean; turn: number; cachedTokens: number; promptTokens: number }[] = [];
    const summary = await cluster.startWorkload({ onTurn: (t) => turns.push(t) }).done;
    expect(summary.trajectories).toBe(6);
    expect(summary.failedRequests).toBe(0);
    expect(summary.missingCachedTokens).toBe(0);
    expect(summary.requests).toBe(turns.length);
    expect(turns.every((t) => t.cachedTokensReported)).toBe(true);
    // healthy: events on, block sizes aligned, follow-up turns hit their prefix
    expect(summary.cacheHitRatio).toBeGreaterThan(0.5);
    expect(turns.filter((t) => t.turn > 0).every((t) => t.cachedTokens > 0)).toBe(true);

    const applied = JSON.parse((await get(cluster.appliedEventsUrl)).text) as AppliedDoc;
    expect(applied.poll).toBe(true);
    expect(applied.parse_issues).toBe(0);
    expect(applied.servers.map((s) => s.server)).toEqual(['ctx0', 'ctx1']);
    for (const s of applied.servers) {
      const worker = cluster.worker(s.server);
      expect(s.url).toBe(worker.address);
      // exactly what the worker served on /kv_cache_events, in order, hashes as exact decimal strings
      expect(s.events).toEqual(worker.served.entries);
      expect(s.events.length).toBeGreaterThan(0);
      expect(s.events.some((e) => e.type === 'stored' && e.block_hashes.some((h) => BigInt(h) > 2n ** 53n))).toBe(true);
      // exactly once: per rank the ids are 0, 1, 2 … without gaps or repeats
      for (const rank of [0, 1]) {
        const ids = s.events.filter((e) => e.attention_dp_rank === rank).map((e) => e.event_id);
        expect(ids).toEqual(ids.map((_, i) => i));
      }
      // every event the worker emitted was served, or still waits in its queue
      const model = worker.worker.events;
      expect(model.stats.dropped).toBe(0);
      expect(s.total + model.size(cluster.scheduler.now())).toBe(model.stats.emitted);
    }

    const debug = JSON.parse((await get(cluster.debugUrl)).text) as DebugDoc;
    expect(debug.router).toEqual({
      type: 'kv_cache_aware',
      tokens_per_block: 128,
      max_batch_size: 64,
      backfill_block_hashes_on_finish: false,
    });
    expect(debug.servers.map((s) => s.url)).toEqual(cluster.workers.map((w) => w.address));
    expect(
      debug.servers.every(
        (s) => s.hash_algo === 'v1_block_key' && s.block_table_size! > 0 && s.polls > 0 && s.poll_failures === 0,
      ),
    ).toBe(true);
    expect(debug.decisions.length).toBe(summary.requests);
    const d = debug.decisions[5]!;
    expect(d.candidates!.map((c) => c.server).sort()).toEqual(cluster.workers.map((w) => w.address).sort());
    expect(d.correlation_id).toMatch(/^traj-/);
    const since = JSON.parse((await get(`${cluster.debugUrl}?since=${debug.decisions.at(-2)!.seq}`)).text) as DebugDoc;
    expect(since.decisions.map((x) => x.seq)).toEqual([debug.decisions.at(-1)!.seq]);

    expect(requestLog.length).toBe(summary.requests);
    const line = JSON.parse(requestLog[0]!) as Record<string, unknown>;
    expect(Object.keys(line)).toEqual([
      'ts',
      'request_id',
      'correlation_id',
      'ctx_server',
      'prompt_tokens',
      'cached_tokens',
    ]);
    expect(cluster.workers.map((w) => w.address)).toContain(line['ctx_server']);
    expect(Date.parse(String(line['ts']))).toBeGreaterThan(Date.now() - 60_000);
    expect(orchestratorLog).toContain(
      orchestratorLog.find((l) =>
        /\[I\] \[serve {3}\] BlockHashMixin: tokens_per_block=128, custom_tokenizer=None$/.test(l),
      ),
    );
    expect(orchestratorLog.filter((l) => l.includes("server is ready with info: {'disaggregated_params'")).length).toBe(
      2,
    );
  });

  it('seed preset (events off): the router applies nothing, cached_tokens still reported', async () => {
    cluster = await startLiveCluster(smallConfig('seed', ['workload.trajectories=3']), { timeScale: 2 });
    const summary = await cluster.startWorkload().done;
    expect(summary.trajectories).toBe(3);
    expect(summary.missingCachedTokens).toBe(0);
    const applied = JSON.parse((await get(cluster.appliedEventsUrl)).text) as AppliedDoc;
    expect(applied.servers.map((s) => s.events)).toEqual([[], []]);
    const debug = JSON.parse((await get(cluster.debugUrl)).text) as DebugDoc;
    expect(debug.servers.map((s) => s.block_table_size)).toEqual([0, 0]);
    expect(debug.router['tokens_per_block']).toBe(32);
  });

  it('passes usage through SSE and serves chat through the orchestrator', async () => {
    cluster = await startLiveCluster(smallConfig('healthy'));
    const prompt = tokens(900, 9);
    const body = JSON.stringify({ model: 'm', prompt, max_tokens: 5 });
    const first = await post(`${cluster.orchestratorUrl}/v1/completions`, body, { 'x-correlation-id': 'conv-1' });
    expect(parseUsage(first.text).value).toMatchObject({ promptTokens: 900, cachedTokens: 0, completionTokens: 5 });
    const streamed = await post(
      `${cluster.orchestratorUrl}/v1/completions`,
      JSON.stringify({ model: 'm', prompt, max_tokens: 5, stream: true, stream_options: { include_usage: true } }),
      { 'x-correlation-id': 'conv-1' },
    );
    expect(streamed.contentType).toContain('text/event-stream');
    const chunks = sseEvents(streamed.text);
    expect(chunks.at(-1)).toBe('[DONE]');
    expect(parseUsage(chunks.at(-2)!).value).toMatchObject({ promptTokens: 900, cachedTokens: 7 * 128 });
    const chat = await post(
      `${cluster.orchestratorUrl}/v1/chat/completions`,
      JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hello '.repeat(50) }] }),
    );
    expect(JSON.parse(chat.text)).toMatchObject({
      object: 'chat.completion',
      usage: { prompt_tokens_details: { cached_tokens: 0 } },
    });
    const debug = JSON.parse((await get(cluster.debugUrl)).text) as DebugDoc;
    expect(debug.decisions.map((x) => x.correlation_id)).toEqual(['conv-1', 'conv-1', null]);
    expect((await get(`${cluster.orchestratorUrl}/health`)).status).toBe(200);

    // the disaggregated /perf_metrics join: one entry per served request, then drained
    const perf = parsePerfMetrics((await get(`${cluster.orchestratorUrl}/perf_metrics`)).text);
    expect(perf.issues).toEqual([]);
    const entries = perf.value.map((e) =>
      e.kind === 'disagg' ? [e.ctxServer, e.ctx?.kvCache?.numReusedBlocks] : null,
    );
    const chosen = debug.decisions.map((x) => x.chosen);
    expect(entries).toEqual([
      [chosen[0], 0],
      [chosen[1], chosen[1] === chosen[0] ? 7 : 0],
      [chosen[2], 0],
    ]);
    expect((await get(`${cluster.orchestratorUrl}/perf_metrics`)).text).toBe('[]');
  });

  it('sends CTX requests and polls to the addresses it is given instead of the workers', async () => {
    cluster = await startLiveCluster(smallConfig('healthy', ['router.type=round_robin']), {
      ctxUrls: async (workers) => Promise.resolve({ ctx0: `http://${workers[1]!.address}` }),
    });
    expect(cluster.ctxAddresses).toEqual({ ctx0: cluster.workers[1]!.address, ctx1: cluster.workers[1]!.address });
    for (let i = 0; i < 4; i++)
      await post(
        `${cluster.orchestratorUrl}/v1/completions`,
        JSON.stringify({ prompt: tokens(200, i), max_tokens: 2 }),
      );
    expect(cluster.worker('ctx0').worker.stats.requests).toBe(0);
    expect(cluster.worker('ctx1').worker.stats.requests).toBe(4);
  });

  it('logs poll failures while a worker restarts and recovers after it', async () => {
    const log: string[] = [];
    cluster = await startLiveCluster(smallConfig('healthy', ['router.type=round_robin']), {
      orchestratorLog: (l) => log.push(l),
    });
    expect(cluster.orchestrator.polls).toBe(false);
    await cluster.stop();
    cluster = await startLiveCluster(smallConfig('healthy', ['ctx.servers=1']), {
      orchestratorLog: (l) => log.push(l),
    });
    const before = await post(
      `${cluster.orchestratorUrl}/v1/completions`,
      JSON.stringify({ prompt: tokens(200, 1), max_tokens: 2 }),
    );
    expect(before.status).toBe(200);
    const restarted = cluster.restartWorker('ctx0');
    const during = await post(
      `${cluster.orchestratorUrl}/v1/completions`,
      JSON.stringify({ prompt: tokens(200, 1), max_tokens: 2 }),
    );
    expect(during.status).toBe(500);
    expect(
      log.some((l) =>
        /\[W\] \[serve {3}\] Failed to poll KV cache events from 127\.0\.0\.1:\d+: Cannot connect to host/.test(l),
      ),
    ).toBe(true);
    await restarted;
    const after = await post(
      `${cluster.orchestratorUrl}/v1/completions`,
      JSON.stringify({ prompt: tokens(200, 1), max_tokens: 2 }),
    );
    expect(after.status).toBe(200);
    const applied = JSON.parse((await get(cluster.appliedEventsUrl)).text) as AppliedDoc;
    // both ranks' `created` before and again after the restart: ids start over at 0
    const created = applied.servers[0]!.events.filter((e) => e.type === 'created');
    expect(created.map((e) => [e.attention_dp_rank, e.event_id])).toEqual([
      [0, 0],
      [1, 0],
      [0, 0],
      [1, 0],
    ]);
    expect(parseUsage(after.text).value?.cachedTokens).toBe(0); // the cache was lost with the restart
  });
});

describe('live cluster faults', () => {
  it('ctx.restart_at restarts ctx0 during the workload; the workload still completes', async () => {
    const log: string[] = [];
    cluster = await startLiveCluster(
      smallConfig('healthy', ['ctx.restart_at=300ms', 'ctx.restart_downtime=300ms', 'workload.trajectories=4']),
      { timeScale: 2, orchestratorLog: (l) => log.push(l) },
    );
    const summary = await cluster.startWorkload().done;
    expect(summary.trajectories).toBe(4);
    expect(summary.abandonedTrajectories).toBe(0);
    expect(cluster.worker('ctx0').worker.stats.restarts).toBe(1);
    // the workload can end while ctx0 is still down (its downtime is wall time): wait for it to listen again
    const postOnceUp = async (url: string): Promise<{ text: string }> => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await post(url, '');
        } catch (err) {
          if (attempt >= 50 || (err as NodeJS.ErrnoException).code !== 'ECONNREFUSED') throw err;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    };
    // What ctx0 emitted since its restart reached the router (applied on its polls) or still waits in ctx0's queue:
    // the router polls a server only after requests it routed there, and whether it routed any to ctx0 (before or
    // after the restart) is timing. So the test drains what is left itself (the workload is over: nobody else polls).
    const applied = JSON.parse((await get(cluster.appliedEventsUrl)).text) as AppliedDoc;
    const left = parseKvEvents((await postOnceUp(`${cluster.worker('ctx0').url}/kv_cache_events`)).text).events.map(
      ({ event }) => ({
        type: event.data.type,
        attention_dp_rank: event.attentionDpRank,
        event_id: event.eventId,
      }),
    );
    const rank0 = [...applied.servers[0]!.events, ...left].filter((e) => e.attention_dp_rank === 0);
    // the restart shows as event ids starting over at 0 on the wire: a `created` with id 0; and when the router
    // read ctx0 before the restart, the ids go back (live-worker.test.ts proves the ids restart on the wire)
    expect(rank0.filter((e) => e.type === 'created' && e.event_id === 0).length).toBeGreaterThanOrEqual(1);
    const startedOver = rank0.some((e, i, all) => i > 0 && e.event_id! < all[i - 1]!.event_id!);
    expect(startedOver || rank0[0]?.event_id === 0).toBe(true);
  });
});

describe('live router faults', () => {
  it('router.poll_on_finish=false: the orchestrator never POSTs /kv_cache_events', async () => {
    cluster = await startLiveCluster(smallConfig('healthy', ['router.poll_on_finish=false']));
    const prompt = JSON.stringify({ prompt: tokens(600, 4), max_tokens: 2 });
    for (let i = 0; i < 3; i++)
      expect((await post(`${cluster.orchestratorUrl}/v1/completions`, prompt)).status).toBe(200);
    expect(cluster.workers.map((w) => cluster!.worker(w.id).stats.drainsServed)).toEqual([0, 0]);
    const debug = JSON.parse((await get(cluster.debugUrl)).text) as DebugDoc;
    expect(debug.servers.map((s) => [s.polls, s.block_table_size])).toEqual([
      [0, 0],
      [0, 0],
    ]);
    // the events wait in the workers' queues
    expect(
      cluster
        .worker(debug.decisions[0]!.chosen === cluster.workers[0]!.address ? 'ctx0' : 'ctx1')
        .worker.events.size(cluster.scheduler.now()),
    ).toBeGreaterThan(0);
  });

  it('router.token_drift: the table fills but the router matches nothing', async () => {
    cluster = await startLiveCluster(smallConfig('healthy', ['router.token_drift=true']));
    const prompt = JSON.stringify({ prompt: tokens(600, 4), max_tokens: 2 });
    for (let i = 0; i < 2; i++)
      expect((await post(`${cluster.orchestratorUrl}/v1/completions`, prompt)).status).toBe(200);
    const debug = JSON.parse((await get(cluster.debugUrl)).text) as DebugDoc;
    expect(debug.servers.some((s) => s.block_table_size! > 0)).toBe(true);
    expect(debug.decisions[1]!.candidates!.map((c) => c.matched_tokens)).toEqual([0, 0]);
  });
});
