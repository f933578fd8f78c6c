// Acceptance of the ZMQ source through the live simulator: its workers publish their KV events over real ZMQ
// sockets in each engine's format, the orchestrator routes through kvsentinel's relays, and kvsentinel subscribes to
// every worker's stream. A vLLM / SGLang cluster whose router reads the streams is healthy; a TensorRT-LLM cluster
// with the streaming publisher on leaves the in-tree router blind, and kvsentinel says so.
import { describe, expect, it } from 'vitest';
import type { Daemon } from '../../src/app/daemon/daemon.js';
import { startLiveCluster } from '../../src/sim/live/index.js';
import { smallConfig } from '../sim/live-helpers.js';
import { eventually } from '../helpers/recording-sink.js';
import { liveSidecarPerTest, watchSnapshots } from '../helpers/live-sidecar.js';
import { zmqDaemonCtxUrls } from '../helpers/zmq-daemon.js';

const sidecar = liveSidecarPerTest();

// 40 trajectories gave ~140 decisions, which a loaded machine's window could leave at 59 of the 60 the verdicts need
const WORKLOAD = ['workload.trajectories=60', 'workload.concurrency=10'];

async function run(
  preset: 'healthy' | 'seed',
  extra: readonly string[],
  daemonOptions: Parameters<typeof zmqDaemonCtxUrls>[1] = {},
): Promise<{ daemon: Daemon; requests: number }> {
  sidecar.cluster = await startLiveCluster(smallConfig(preset, [...WORKLOAD, ...extra]), {
    timeScale: 2,
    ctxUrls: zmqDaemonCtxUrls(sidecar, daemonOptions),
  });
  const daemon = sidecar.daemon!;
  const summary = await sidecar.cluster.startWorkload().done;
  expect(summary.failedRequests).toBe(0);
  await eventually(() => daemon.snapshot().requests === summary.requests, 5_000, 'every decision seen');
  return { daemon, requests: summary.requests };
}

describe('kvsentinel on ZMQ KV-event streams of the live simulator', () => {
  it.each(['vllm', 'vllm-array', 'sglang'])(
    '%s: a router that reads the streams is healthy, and the joins use the stream as worker truth',
    async (format) => {
      const { daemon, requests } = await run('healthy', [`ctx.kv_events_publisher=${format}`]);
      expect(requests).toBeGreaterThan(60);
      // the verdict settles once the window holds enough decisions (a finding raised while the evidence was still thin,
      // evidence-insufficient, takes five evaluations to turn off): wait for it, and no snapshot on the way pages
      const seen = await watchSnapshots(daemon, 15_000, (s) => s.verdict === 'healthy' && s.findings.length === 0);
      for (const s of seen) expect(s.findings.filter((f) => f.severity === 'critical').map((f) => f.id)).toEqual([]);
      const snap = seen.at(-1)!;
      expect(snap.verdict, JSON.stringify(snap.findings.map((f) => [f.id, f.summary]))).toBe('healthy');
      expect(snap.findings.map((f) => f.id)).toEqual([]);
      expect(snap.oracleHitRatio).toBeGreaterThan(0.5); // the oracle from stream-fed worker truth
      expect(snap.cacheHitRatio).toBeGreaterThan(0.5);
      for (const s of snap.servers) {
        // the simulator's rank affinity puts most prefixes on rank 0; a rank that stored nothing is silent on a stream
        expect(s.ranks.find((r) => r.rank === 0)?.eventsByType.stored).toBeGreaterThan(0);
        expect(s.ranks.every((r) => r.rank === 0 || r.rank === 1)).toBe(true);
        // re-keyed from their tokens: nothing to verify, nothing called a mismatch
        expect(s.hashChecks.mismatch).toBe(0);
        expect(s.hashChecks.unverifiable).toBeGreaterThan(0);
        expect(s.routerPolls).toBe(0); // no pull path: the relay only proxies
        expect(s.routerTableBlocks).toBeGreaterThan(0); // the router's view is the stream itself
      }
      const metrics = await (await fetch(`http://127.0.0.1:${daemon.webAddress().port}/metrics`)).text();
      expect(metrics).toMatch(/kvsentinel_stream_batches_total\{server="ctx0",rank="0"\} [1-9]/);
      expect(metrics).toContain('kvsentinel_up{source="zmq:ctx0/rank0"} 1');
      expect(metrics).toContain('kvsentinel_up{source="zmq:ctx0/rank1"} 1');
    },
  );

  it.each(['sha256_cbor', 'sha256_cbor_int'])(
    'vllm publishing %s hashes under the PYTHONHASHSEED kvsentinel is given: every block verified, nothing paged',
    async (hashes) => {
      const { daemon } = await run('healthy', ['ctx.kv_events_publisher=vllm', `ctx.vllm_hashes=${hashes}`], {
        vllmHashing: { hash_algo: 'sha256_cbor', python_hash_seed: '0' },
      });
      // the daemon evaluates once a second and a finding needs two evaluations: watch three, none may page
      const seen = await watchSnapshots(daemon, 3_100);
      for (const s of seen)
        expect(
          s.findings.filter((f) => f.severity === 'critical' || f.id === 'hash-mismatch').map((f) => [f.id, f.summary]),
        ).toEqual([]);
      const snap = seen.at(-1)!;
      for (const s of snap.servers) {
        // every stored block that reached the tables chains to a root kvsentinel saw: all recompute
        expect(s.hashChecks.match).toBeGreaterThan(0);
        expect(s.hashChecks.mismatch).toBe(0);
        expect(s.hashChecks.unverifiable).toBe(0);
        expect(s.routerTableBlocks).toBeGreaterThan(0);
      }
    },
  );

  it('trtllm streaming publisher: the pull path is empty, the in-tree router blind, and the audit names the cause', async () => {
    const { daemon } = await run('healthy', ['ctx.kv_events_publisher=trtllm']);
    let ids: string[] = [];
    await eventually(
      () => {
        ids = daemon.snapshot().findings.map((f) => f.id);
        return ids.includes('events-absent') && ids.includes('cache-signal-inert');
      },
      10_000,
      'events-absent and cache-signal-inert',
    );
    const snap = daemon.snapshot();
    expect(snap.verdict).toBe('inert');
    const absent = snap.findings.find((f) => f.id === 'events-absent')!;
    expect(absent.cause).toMatch(
      /^streaming publisher enabled: the pull endpoint returns \[\] and the in-tree router is blind/,
    );
    expect(absent.servers).toEqual(['ctx0', 'ctx1']);
    for (const s of snap.servers) {
      // TensorRT-LLM's streamed keys are the V2 manager's: every one recomputes
      expect(s.hashChecks.match).toBeGreaterThan(0);
      expect(s.hashChecks.mismatch).toBe(0);
      expect(s.routerTableBlocks).toBe(0); // what the router polled: nothing
    }
  });

  it('vllm with KV events off: the subscribed streams stay silent and events-absent names the worker flags', async () => {
    // the publishers are bound, but no cache manager emits (prefix caching off)
    const { daemon } = await run('healthy', ['ctx.kv_events_publisher=vllm', 'ctx.event_buffer_max_size=0']);
    let ids: string[] = [];
    await eventually(
      () => (ids = daemon.snapshot().findings.map((f) => f.id)).includes('events-absent'),
      10_000,
      'events-absent',
    );
    const absent = daemon.snapshot().findings.find((f) => f.id === 'events-absent')!;
    expect(absent.summary).toMatch(/their ZMQ KV-event stream carried no event/);
    expect(absent.fix).toContain('--kv-events-config');
    expect(ids).not.toContain('source-unreachable'); // the publishers are there, only silent
    expect(ids).not.toContain('router-not-polling');
    expect(daemon.snapshot().verdict).not.toBe('healthy');
  });
});
