import { mkdtemp, rm, writeFile, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { buildConfig, type ServeConfig } from '../../src/app/config/serve-config.js';
import { createDaemon, type Daemon } from '../../src/app/daemon/daemon.js';
import { createSentinelState } from '../../src/core/state/sentinel-state.js';
import { startFakeCtxWorker, type FakeCtxWorker } from '../helpers/fake-ctx-worker.js';
import { pollEvents, runFakeOrchestrator } from '../helpers/fake-orchestrator.js';
import { promtoolProblems } from '../helpers/promtool.js';
import { eventually } from '../helpers/recording-sink.js';
import { cleanupsAfterEach } from '../helpers/test-resources.js';

const cleanups = cleanupsAfterEach();

async function startDaemon(
  workers: FakeCtxWorker[],
  extra: Record<string, unknown> = {},
  loadConfig?: () => Promise<ServeConfig>,
): Promise<{ daemon: Daemon; base: string; relayBases: string[] }> {
  const config = buildConfig(
    {
      web: { listen_address: '127.0.0.1:0' },
      relays: workers.map((w, i) => ({ id: `ctx${i}`, upstream: w.url, listen: '127.0.0.1:0' })),
      relay: { drain_interval: '50ms', drain_timeout: '500ms' },
      server_info_interval: '200ms',
      timeout: '500ms',
      ...extra,
    },
    {},
  );
  const daemon = createDaemon(config, loadConfig !== undefined ? { loadConfig } : {});
  await daemon.start();
  cleanups.push(() => daemon.stop());
  const a = daemon.webAddress();
  const relayBases = workers.map((_, i) => {
    const r = daemon.relayAddress(`ctx${i}`);
    return `http://127.0.0.1:${r?.port}`;
  });
  return { daemon, base: `http://${a.host}:${a.port}`, relayBases };
}

async function workers(n: number): Promise<FakeCtxWorker[]> {
  const out: FakeCtxWorker[] = [];
  for (let i = 0; i < n; i++) {
    const w = await startFakeCtxWorker();
    cleanups.push(() => w.close());
    out.push(w);
  }
  return out;
}

async function get(url: string): Promise<{ status: number; text: string; type: string }> {
  const res = await request(url);
  return { status: res.statusCode, text: await res.body.text(), type: String(res.headers['content-type']) };
}

describe('kvsentinel serve (in process)', () => {
  it('relays, feeds one state, and exports it: promtool-clean, per-server counters, health', async () => {
    const ws = await workers(2);
    const { base, relayBases, daemon } = await startDaemon(ws);
    const run = await runFakeOrchestrator(relayBases, 10, { consumer: 'router' });
    expect(run.statuses.every((s) => s === 200)).toBe(true);
    for (const [i, b] of relayBases.entries()) {
      run.received.get(b)?.push(...(await pollEvents(b, 'router')));
      expect(run.received.get(b)).toEqual(ws[i]?.emitted);
    }
    await eventually(() => daemon.snapshot().requests === 10, 3_000, 'state saw every request');
    const metrics = await get(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.type).toContain('text/plain');
    expect(metrics.text).toContain('kvsentinel_up{source="relay:ctx0"} 1');
    expect(metrics.text).toMatch(/kvsentinel_requests_total\{server="ctx1"\} 5\n/);
    expect(metrics.text).toMatch(/kvsentinel_router_polls_total\{server="ctx0"\} [1-9]/);
    expect(metrics.text).toMatch(/kvsentinel_relay_request_duration_seconds_count\{server="ctx0"\} 5\n/);
    expect(metrics.text).toContain('kvsentinel_config_last_reload_successful 1');
    expect(promtoolProblems(metrics.text).problems).toEqual([]);

    expect((await get(`${base}/-/healthy`)).status).toBe(200);
    expect((await get(`${base}/-/ready`)).text).toBe('Ready\n');
    const landing = await get(`${base}/`);
    expect(landing.type).toContain('text/html');
    expect(landing.text).toContain('relay:ctx0');
    expect(landing.text).toContain(ws[0]?.url);
    expect(landing.text).toMatch(/router: \d+ delivered, backlog 0, dropped 0/);
    expect((await get(`${base}/nope`)).status).toBe(404);
    const reloadGet = await get(`${base}/-/reload`);
    expect(reloadGet.status).toBe(405);
  });

  it('reads only read: scrapes, the landing page and the report evaluate nothing; the daemon evaluates on its clock', async () => {
    const ws = await workers(1);
    const state = createSentinelState({ mode: 'auto', windowMs: null, hysteresis: { onAfter: 2, offAfter: 5 } });
    const evaluatedAt: number[] = [];
    let reads = 0;
    const config = buildConfig(
      {
        web: { listen_address: '127.0.0.1:0' },
        relays: [{ id: 'ctx0', upstream: ws[0]!.url, listen: '127.0.0.1:0' }],
        relay: { drain_interval: '50ms', drain_timeout: '500ms' },
      },
      {},
    );
    const daemon = createDaemon(config, {
      evaluateEveryMs: 400,
      createState: () => ({
        apply: (o) => state.apply(o),
        evaluate: (now) => (evaluatedAt.push(now), state.evaluate(now)),
        snapshot: (now) => (reads++, state.snapshot(now)),
        lastEvaluation: () => state.lastEvaluation(),
        subscribe: (listener) => state.subscribe(listener),
      }),
    });
    const started = Date.now();
    await daemon.start();
    cleanups.push(() => daemon.stop());
    const a = daemon.webAddress();
    const base = `http://${a.host}:${a.port}`;
    for (let i = 0; i < 40; i++) expect((await get(`${base}/metrics`)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await get(`${base}/`)).status).toBe(200);
    const elapsed = Date.now() - started;
    expect(reads).toBeGreaterThanOrEqual(40);
    // one evaluation on start and one per 400 ms of the clock, however many reads came between
    expect(evaluatedAt.length).toBeGreaterThanOrEqual(1);
    expect(evaluatedAt.length).toBeLessThanOrEqual(Math.floor(elapsed / 400) + 1);
    for (const [i, t] of evaluatedAt.entries()) if (i > 0) expect(t - evaluatedAt[i - 1]!).toBeGreaterThanOrEqual(400);
    // what a scrape shows is the last evaluation's
    expect(daemon.snapshot().findings).toEqual(state.lastEvaluation()!.findings);
  });

  it('streams decisions and finding changes to a real ws client, never token ids or prompt text', async () => {
    const ws = await workers(2);
    const { base, relayBases } = await startDaemon(ws);
    const client = new WebSocket(`${base.replace('http', 'ws')}/ws`);
    const frames: string[] = [];
    client.on('message', (d: Buffer) => frames.push(d.toString('utf8')));
    await new Promise((r) => client.once('open', r));
    cleanups.push(async () => {
      client.close();
      await new Promise((r) => setTimeout(r, 10));
    });
    const secret = 'the secret prompt text';
    const res = await request(`${relayBases[0]}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({
        model: 'm',
        messages: [{ role: 'user', content: secret }],
        prompt_token_ids: [424242, 515151, 616161],
      }),
    });
    await res.body.text();
    await runFakeOrchestrator(relayBases, 4);
    await eventually(() => frames.filter((f) => f.includes('"type":"outcome"')).length >= 5, 3_000, 'outcome frames');
    const decisions = frames
      .filter((f) => f.includes('"type":"decision"'))
      .map((f) => JSON.parse(f) as Record<string, unknown>);
    expect(decisions).toHaveLength(5);
    expect(decisions[0]).toMatchObject({ server: 'ctx0', prompt_token_count: 3 });
    // the state's join rides along: per-server router-predicted and really-held tokens (counts, never ids)
    const joined = decisions.find((d) => Array.isArray(d['candidates']) && (d['candidates'] as unknown[]).length > 0);
    const candidate = (joined?.['candidates'] as Record<string, unknown>[] | undefined)?.[0];
    expect(typeof candidate?.['predicted_tokens']).toBe('number');
    expect(typeof candidate?.['oracle_tokens']).toBe('number');
    // a worker dies: its relay source goes down and the source-unreachable finding is raised
    await ws[1]?.close();
    await eventually(
      () =>
        frames.some(
          (f) => f.includes('"type":"finding"') && f.includes('"change":"raised"') && f.includes('source-unreachable'),
        ),
      8_000,
      'finding frame',
    );
    expect(frames.some((f) => f.includes('"type":"source"') && f.includes('"up":false'))).toBe(true);
    for (const f of frames) {
      expect(f).not.toContain(secret);
      expect(f).not.toMatch(/424242|515151|616161/);
      expect(f).not.toMatch(/prompt_token_ids|promptTokens"/);
      // token ids would be arrays of numbers; frames carry none
      expect(f).not.toMatch(/\[\s*\d+\s*,\s*\d+/);
    }
  }, 20_000);

  it('shows a killed worker, garbage JSON and an oversized response as up=0 or counted errors, never a crash', async () => {
    const ws = await workers(3);
    const { base, relayBases } = await startDaemon(ws, {
      max_response_bytes: 100_000,
      relay: { drain_interval: '50ms', drain_timeout: '500ms', max_drain_bytes: 100_000 },
    });
    await runFakeOrchestrator(relayBases, 3);
    (ws[0] as FakeCtxWorker).eventsFault = 'garbage';
    (ws[1] as FakeCtxWorker).eventsFault = 'oversized';
    await ws[2]?.close();
    await eventually(() => true, 10);
    await new Promise((r) => setTimeout(r, 300));
    const metrics = (await get(`${base}/metrics`)).text;
    expect(metrics).toContain('kvsentinel_up{source="relay:ctx0"} 0');
    expect(metrics).toMatch(/kvsentinel_source_errors_total\{source="relay:ctx0",reason="parse"\} [1-9]/);
    expect(metrics).toMatch(/kvsentinel_bad_input_total\{source="relay:ctx0",code="truncated-json"\} [1-9]/);
    expect(metrics).toMatch(/kvsentinel_source_errors_total\{source="relay:ctx1",reason="oversized"\} [1-9]/);
    expect(metrics).toContain('kvsentinel_up{source="relay:ctx2"} 0');
    expect(metrics).toMatch(/kvsentinel_source_errors_total\{source="relay:ctx2",reason="connect"\} [1-9]/);
    expect(metrics).toContain('kvsentinel_up{source="server-info:ctx2"} 0');
    // the sidecar itself is fine
    expect((await get(`${base}/-/healthy`)).status).toBe(200);
    const proxied = await request(`${relayBases[2]}/v1/completions`, { method: 'POST', body: '{"prompt":[1]}' });
    expect(proxied.statusCode).toBe(502);
    await proxied.body.text();
  });

  it('reloads: applies a valid config, keeps the old one (and says so) when the new one is invalid', async () => {
    const ws = await workers(2);
    const dir = await mkdtemp(join(tmpdir(), 'kvs-reload-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'requests.jsonl');
    await writeFile(file, '');
    let next: () => Promise<ServeConfig> = () => Promise.reject(new Error('unset'));
    const { base, daemon } = await startDaemon([ws[0] as FakeCtxWorker], {}, () => next());
    const listen = daemon.config().listen;
    const relay0 = daemon.relayAddress('ctx0');

    next = () =>
      Promise.resolve(
        buildConfig(
          {
            web: { listen_address: `${listen.host}:${listen.port}` },
            relays: [{ id: 'ctx0', upstream: ws[0]?.url, listen: '127.0.0.1:0' }],
            relay: { drain_interval: '50ms', drain_timeout: '500ms' },
            ctx: [{ id: 'ctx9', url: ws[1]?.url }],
            requests: [{ path: file }],
            follow_interval: '50ms',
            server_info_interval: '200ms',
            timeout: '500ms',
          },
          {},
        ),
      );
    const ok = await request(`${base}/-/reload`, { method: 'POST' });
    expect(ok.statusCode).toBe(200);
    await ok.body.text();
    // the unchanged relay kept running on its port
    expect(daemon.relayAddress('ctx0')).toEqual(relay0);
    await appendFile(
      file,
      '{"ts":1700000000,"request_id":"r1","correlation_id":"t1","ctx_server":"ctx9","prompt_tokens":100,"cached_tokens":64}\nnot json\n',
    );
    await eventually(
      () => daemon.status.list().find((s) => s.source === 'requests:0')?.badInput['invalid-json'] === 1,
      3_000,
      'bad line counted',
    );
    await eventually(
      () => daemon.snapshot().servers.some((s) => s.server === 'ctx9' && s.cachedTokens === 64),
      3_000,
      'request log joined',
    );
    await eventually(
      () => daemon.status.list().find((s) => s.source === 'server-info:ctx9')?.up === true,
      3_000,
      'new ctx source up',
    );

    next = async () => {
      await Promise.resolve();
      return buildConfig({ relays: [{ id: 'ctx0', upstream: 'not a url', listen: 1 }] }, {}, 'kvsentinel.yaml');
    };
    const bad = await request(`${base}/-/reload`, { method: 'POST' });
    expect(bad.statusCode).toBe(500);
    expect(await bad.body.text()).toContain("kvsentinel.yaml: relays[0].upstream: 'not a url' is not an http(s) URL");
    expect(daemon.relayAddress('ctx0')).toEqual(relay0);
    const metrics = (await get(`${base}/metrics`)).text;
    expect(metrics).toContain('kvsentinel_config_last_reload_successful 0');
    expect(metrics).toContain('kvsentinel_up{source="server-info:ctx9"} 1');
  });

  it('stops gracefully: an in-flight relay request finishes, then ports close', async () => {
    const ws = await workers(1);
    (ws[0] as FakeCtxWorker).completionDelayMs = 300;
    const { daemon, relayBases, base } = await startDaemon(ws);
    const pending = request(`${relayBases[0]}/v1/completions`, { method: 'POST', body: '{"prompt":[1,2]}' });
    await eventually(
      () => ws[0]?.requests.some((r) => r.path === '/v1/completions') ?? false,
      2_000,
      'request at worker',
    );
    const stopped = daemon.stop();
    const res = await pending;
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toContain('cached_tokens');
    await stopped;
    await expect(request(`${base}/-/healthy`)).rejects.toThrow();
    await expect(request(`${relayBases[0]}/health`)).rejects.toThrow();
  });
});
