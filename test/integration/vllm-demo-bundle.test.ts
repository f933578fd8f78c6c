// `demo --engine vllm` as a recording: the workers publish KV events on ZMQ (kvsentinel subscribes, the router reads
// the streams) behind relays. The fixed configuration ends healthy and the seed inert, and the audit of a bundle of
// the run — in the relay mode `record` writes and in auto mode — gives the live verdict: whether the router's polls
// are due comes from its kind, never from the sidecar's mode.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { auditBundle } from '../../src/app/audit/bundle-audit.js';
import { demoSimConfig, startDemo } from '../../src/app/demo/demo-run.js';
import type { Observation } from '../../src/core/observe/observation.js';
import { BundleWriter } from '../../src/outputs/bundle-writer.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

async function bundleVerdict(observations: readonly Observation[], mode: 'relay' | 'auto'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kvs-vllm-demo-'));
  dirs.push(dir);
  await rm(dir, { recursive: true, force: true });
  const writer = await BundleWriter.create(dir, { mode });
  for (const o of observations) writer.write(o);
  await writer.close();
  return (await auditBundle(dir)).verdict;
}

describe('demo --engine vllm, live and from its bundle', () => {
  it.each([
    [true, 'healthy'],
    [false, 'inert'],
  ] as const)(
    'fixed=%s ends %s, and its bundle audits the same in relay and auto mode',
    async (fixed, expected) => {
      const observations: Observation[] = [];
      const demo = await startDemo({
        config: demoSimConfig(fixed, 'vllm', []),
        timeScale: 10,
        listen: { host: '127.0.0.1', port: 0 },
        logger: quiet,
        onObservation: (o) => observations.push(o),
      });
      let report;
      try {
        demo.startTraffic();
        // enough decisions and follow-ups for every verdict rule (the demo test's runs settle after ~10 s of traffic)
        const deadline = Date.now() + 150_000;
        while (Date.now() < deadline && demo.snapshot().requests < 600) await new Promise((r) => setTimeout(r, 500));
        report = await demo.report({ interrupted: false });
      } finally {
        await demo.stop();
      }
      const context = JSON.stringify(report.findings.map((f) => [f.id, f.severity, f.summary]));
      expect(report.stats.requests, context).toBeGreaterThanOrEqual(600);
      expect(report.verdict, context).toBe(expected);
      expect(report.findings.map((f) => f.id)).not.toContain('router-not-polling');
      if (fixed) expect(report.findings, context).toEqual([]);
      expect(await bundleVerdict(observations, 'relay')).toBe(report.verdict);
      expect(await bundleVerdict(observations, 'auto')).toBe(report.verdict);
    },
    240_000,
  );
});
