// Issue #14's table on the live simulator through the real relay daemon, both router profiles: each row's verdict and
// cause, and zero critical findings on every healthy run (spread and concentrated). The daemon's state is the
// one-shot one (`audit` semantics: counters since start, no hysteresis), read once the workload has finished.
import { mkdtemp, rm, appendFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildConfig } from '../../src/app/config/serve-config.js';
import { createDaemon, type Daemon } from '../../src/app/daemon/daemon.js';
import { createSentinelState, type SentinelState } from '../../src/core/state/sentinel-state.js';
import { startLiveCluster, type LiveCluster } from '../../src/sim/live/index.js';
import { presetConfig } from '../../src/sim/sim-config.js';
import { eventually } from '../helpers/recording-sink.js';

const LIVE_SCALE = [
  'ctx.servers=3',
  'ctx.attention_dp=1',
  'ctx.overhead=5ms',
  'ctx.prefill_tokens_per_s=400000',
  'ctx.stall_every=0',
  'gen.overhead=10ms',
  'gen.ms_per_token=0.2',
  'workload.trajectories=48',
  'workload.concurrency=12',
  'workload.system_prefix_tokens=1000',
  'workload.task_tokens_median=400',
  'workload.turns_min=5',
  'workload.turns_max=7',
  'workload.output_tokens_median=20',
  'workload.tool_tokens_median=100',
  'workload.tool_tokens_max=400',
  'workload.tool_latency=20ms',
  'workload.ramp=50ms',
];

interface LiveRow {
  readonly name: string;
  readonly preset: 'healthy' | 'seed';
  readonly set: readonly string[];
  /** give the daemon the orchestrator log (--orchestrator-log) */
  readonly log: boolean;
  readonly verdicts: readonly string[];
  readonly critical: readonly string[];
  readonly warnings?: readonly string[];
  readonly says?: Readonly<Record<string, string>>;
  readonly tpb?: { readonly value: number; readonly from: string };
  /** the router's own /debug/router shows decisions that went below the best score (the conversation pin) */
  readonly pinOverrides?: true;
  /** the orchestrator's CTX bodies are msgpack (no X-Correlation-ID): every decision must still be read */
  readonly msgpack?: true;
}

let cluster: LiveCluster | null = null;
let daemon: Daemon | null = null;
let dir: string | null = null;
afterEach(async () => {
  await cluster?.stop();
  await daemon?.stop();
  if (dir !== null) await rm(dir, { recursive: true, force: true });
  cluster = null;
  daemon = null;
  dir = null;
});

interface RowResult {
  readonly snap: ReturnType<SentinelState['snapshot']>;
  readonly input: ReturnType<SentinelState['diagnosisInput']>;
}

async function runRow(row: LiveRow): Promise<RowResult> {
  dir = await mkdtemp(join(tmpdir(), 'kvs-verdict-'));
  const logPath = join(dir, 'orchestrator.log');
  await writeFile(logPath, '');
  const state = createSentinelState({ mode: 'relay', windowMs: null });
  let lines = Promise.resolve();
  cluster = await startLiveCluster(presetConfig(row.preset, [...LIVE_SCALE, ...row.set]), {
    timeScale: 2,
    ...(row.log
      ? { orchestratorLog: (line: string) => void (lines = lines.then(() => appendFile(logPath, `${line}\n`))) }
      : {}),
    ctxUrls: async (workers) => {
      daemon = createDaemon(
        buildConfig(
          {
            web: { listen_address: '127.0.0.1:0' },
            relays: workers.map((w) => ({ id: w.id, upstream: w.url, listen: '127.0.0.1:0' })),
            relay: { drain_interval: '100ms' },
            server_info_interval: '1s',
            follow_interval: '50ms',
            ...(row.log ? { orchestrator_log: logPath } : {}),
          },
          {},
        ),
        { web: false, createState: () => state },
      );
      await daemon.start();
      return Object.fromEntries(workers.map((w) => [w.id, `127.0.0.1:${daemon!.relayAddress(w.id)?.port ?? 0}`]));
    },
  });
  const summary = await cluster.startWorkload().done;
  expect(summary.failedRequests).toBe(0);
  await lines;
  await eventually(
    () => state.snapshot(Date.now()).requests >= summary.requests,
    10_000,
    'the state saw every request',
  );
  if (row.log)
    await eventually(
      () => state.snapshot(Date.now()).routerTokensPerBlock.from === 'orchestrator-log' || row.tpb === undefined,
      5_000,
      'the orchestrator log read',
    );
  const now = Date.now();
  return { snap: state.evaluate(now), input: state.diagnosisInput(now) };
}

const NEWEST = ['router.profile=newest'];

const ROWS: readonly LiveRow[] = [
  {
    name: '2026-06, healthy, spread (max_batch_size 64)',
    preset: 'healthy',
    set: ['router.max_batch_size=64'],
    log: false,
    verdicts: ['healthy', 'degraded'],
    critical: [],
  },
  {
    name: '2026-06, healthy, max_batch_size 512, all traffic on one server',
    preset: 'healthy',
    set: ['router.max_batch_size=512', 'workload.ramp=12s', 'workload.system_prefix_tokens=3000'],
    log: false,
    verdicts: ['degraded'],
    critical: [],
    warnings: ['load-concentrated'],
  },
  {
    name: 'seed (events off, tokens_per_block 32), relay only',
    preset: 'seed',
    set: ['router.max_batch_size=8'],
    log: false,
    verdicts: ['inert'],
    critical: ['events-absent', 'cache-signal-inert'],
  },
  {
    name: '2026-06, router tokens_per_block 32, relay only: block size and tokenization named',
    preset: 'healthy',
    set: ['router.max_batch_size=64', 'router.tokens_per_block=32'],
    log: false,
    verdicts: ['inert'],
    critical: ['router-hash-divergence', 'cache-signal-inert'],
    says: { 'router-hash-divergence': 'two causes fit equally' },
  },
  {
    name: '2026-06, msgpack bodies, router tokens_per_block 32, relay only: never matches, never healthy',
    preset: 'healthy',
    set: ['router.max_batch_size=64', 'router.tokens_per_block=32', 'router.ctx_body=msgpack'],
    log: false,
    msgpack: true,
    verdicts: ['inert'],
    critical: ['router-hash-divergence', 'cache-signal-inert'],
    says: { 'router-hash-divergence': 'two causes fit equally' },
  },
  {
    name: 'newest, tokens_per_block unset (adopts 128), with the orchestrator log',
    preset: 'healthy',
    set: [...NEWEST, 'router.tokens_per_block=0'],
    log: true,
    verdicts: ['healthy', 'degraded'],
    critical: [],
    tpb: { value: 128, from: 'orchestrator-log' },
  },
  {
    // multi-turn chat bodies: the first two messages (system prefix, first task) are fixed per conversation, so the
    // content-affinity pin holds every later turn on its first server whatever the scores; that is not evidence
    // against the cache signal
    name: 'newest, multi-turn chat (the conversation pin holds), with the orchestrator log',
    preset: 'healthy',
    set: [...NEWEST, 'router.tokens_per_block=0', 'router.load_weight=4', 'workload.request_format=chat-turns'],
    log: true,
    verdicts: ['healthy', 'degraded'],
    critical: [],
    pinOverrides: true,
  },
  {
    name: 'newest, events off (routed-block tracking on), relay only',
    preset: 'healthy',
    set: [...NEWEST, 'router.tokens_per_block=0', 'ctx.event_buffer_max_size=0'],
    log: false,
    verdicts: ['degraded'],
    critical: ['events-absent'],
    warnings: ['event-signal-masked'],
  },
  {
    name: 'newest, tokens_per_block 32 vs 128 (polling skipped by design), with the orchestrator log',
    preset: 'healthy',
    set: [...NEWEST, 'router.tokens_per_block=32'],
    log: true,
    verdicts: ['degraded'],
    critical: [],
    warnings: ['event-signal-masked', 'tokens-per-block-mismatch'],
    says: { 'tokens-per-block-mismatch': 'skips their event polling by design' },
    tpb: { value: 32, from: 'orchestrator-log' },
  },
];

describe('verdicts on the live simulator through the relay (issue #14)', () => {
  it.each(ROWS.map((r) => [r.name, r] as const))(
    '%s',
    async (_name, row) => {
      const { snap, input } = await runRow(row);
      const ids = (severity: string): string[] =>
        snap.findings
          .filter((f) => f.severity === severity)
          .map((f) => f.id)
          .sort();
      const context = `${row.name}: ${snap.verdict} ${snap.servers.map((s) => `${s.server}=${s.requests}`).join(' ')} ${JSON.stringify(snap.findings.map((f) => [f.id, f.summary]))}`;
      expect(snap.requests, context).toBeGreaterThan(150);
      expect(ids('critical'), context).toEqual([...row.critical].sort());
      for (const id of row.warnings ?? []) expect(ids('warning'), context).toContain(id);
      expect(row.verdicts, context).toContain(snap.verdict);
      for (const [id, text] of Object.entries(row.says ?? {})) {
        const f = snap.findings.find((x) => x.id === id);
        expect(`${f?.summary ?? ''} ${f?.cause ?? ''}`, context).toContain(text);
      }
      if (row.tpb !== undefined) expect(snap.routerTokensPerBlock).toMatchObject(row.tpb);
      if (row.pinOverrides === true) {
        const debug = (await (await fetch(cluster!.debugUrl)).json()) as {
          decisions: { chosen: string; candidates: { server: string; score: number }[] }[];
        };
        const below = debug.decisions.filter(
          (d) => d.candidates.find((c) => c.server === d.chosen)!.score < Math.max(...d.candidates.map((c) => c.score)),
        );
        expect(below.length, context).toBeGreaterThan(0);
      }
      if (row.msgpack) {
        // the decode is in the path: nothing unreadable, and every decision's prompt ids were read
        for (const sv of input.servers)
          expect(sv.unreadableRequests, `${context} ${sv.server}`).toEqual({
            unknown_encoding: 0,
            malformed: 0,
            too_large: 0,
            no_prompt: 0,
          });
        expect(input.decisions.withKeys, context).toBe(snap.requests);
      }
    },
    120_000,
  );
});
