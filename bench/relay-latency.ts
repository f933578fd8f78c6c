// Latency the relay adds to a CTX request (target: p50 < +1 ms), measured against the same fake worker directly.
// A measurement, not a test, outside the report (`npm run bench -- --only relay` measures the relay under load). It is
// compiled with the bench (`npm run bench`, or `npx tsc -p bench/tsconfig.json`) into build/; run:
//   node build/bench/relay-latency.js
// BENCH_PATH=/v1/other proxies without decision capture; BENCH_CAPTURE=1 captures but skips the body parse.
// The worker answers instantly, so the decision parse (CPU, on the relay's event loop) shows up in full here; with a
// real CTX worker it overlaps the prefill.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { parseKvEvents } from '../src/core/wire/parse-kv-events.js';
import { silentLogger } from '../src/sources/ports.js';
import { InflightTracker } from '../src/sources/relay/inflight-tracker.js';
import { WorkerRelay } from '../src/sources/relay/worker-relay.js';
import { SourceStatusBoard } from '../src/sources/source-status.js';

const usage =
  '{"id":"c","choices":[{"index":0,"text":"x"}],"usage":{"prompt_tokens":40000,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":38912}}}';

async function main(): Promise<void> {
  // a worker that answers at once, so the measured time is transport + relay
  const worker = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/kv_cache_events') res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
      else res.writeHead(200, { 'content-type': 'application/json' }).end(usage);
    });
  });
  await new Promise<void>((r) => worker.listen(0, '127.0.0.1', r));
  const upstream = `http://127.0.0.1:${(worker.address() as AddressInfo).port}`;
  const sink = { apply: () => undefined };
  const relay = new WorkerRelay(
    { id: 'ctx0', upstream, host: '127.0.0.1', port: 0 },
    {
      sink,
      status: new SourceStatusBoard({ sink, clock: Date.now }),
      clock: Date.now,
      logger: silentLogger,
      inflight: new InflightTracker(),
      parseEvents: parseKvEvents,
    },
    {
      drainIntervalMs: 250,
      ...(process.env.BENCH_CAPTURE !== undefined ? { captureMaxBytes: Number(process.env.BENCH_CAPTURE) } : {}),
    },
  );
  await relay.start();
  const relayed = `http://127.0.0.1:${relay.address().port}`;
  const agent = new Agent({ connections: 1 });

  for (const tokens of [16, 40_000]) {
    const body = JSON.stringify({
      model: 'm',
      prompt: Array.from({ length: tokens }, (_, i) => (i * 7919) % 152_000),
      max_tokens: 1,
      disaggregated_params: { request_type: 'context_only', disagg_request_id: 1 },
    });
    const sample = async (base: string): Promise<number> => {
      const t = performance.now();
      const res = await request(`${base}${process.env.BENCH_PATH ?? '/v1/completions'}`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
        dispatcher: agent,
      });
      await res.body.text();
      return performance.now() - t;
    };
    const direct: number[] = [];
    const viaRelay: number[] = [];
    for (let i = 0; i < 100; i++) {
      await sample(upstream);
      await sample(relayed);
    }
    for (let i = 0; i < 1000; i++) {
      direct.push(await sample(upstream));
      viaRelay.push(await sample(relayed));
    }
    const q = (xs: number[], p: number): number =>
      [...xs].sort((a, b) => a - b)[Math.floor(xs.length * p)] ?? Number.NaN;
    console.log(
      `prompt ${tokens} tokens (${(body.length / 1024).toFixed(0)} KiB): direct p50 ${q(direct, 0.5).toFixed(3)} ms p99 ${q(direct, 0.99).toFixed(3)} ms | ` +
        `relay p50 ${q(viaRelay, 0.5).toFixed(3)} ms p99 ${q(viaRelay, 0.99).toFixed(3)} ms | added p50 ${(q(viaRelay, 0.5) - q(direct, 0.5)).toFixed(3)} ms`,
    );
  }
  await relay.stop();
  await agent.close();
  await new Promise<void>((r) => worker.close(() => r()));
}

await main();
