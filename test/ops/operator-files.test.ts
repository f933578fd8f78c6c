// What an operator installs, checked with the real tools: /metrics of a running `kvsentinel serve` passes
// `promtool check metrics` whole (process metrics included), finding series carry the CTX server the alerts page
// about, the prometheus.yml snippet for clusters without the operator passes `promtool check config` (its rule
// file included), every warning finding has a runbook section, and the page at / names its own tail command.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { FINDING_CATALOG, FINDING_IDS } from '../../src/core/diagnosis/finding-catalog.js';
import { createExporter } from '../../src/outputs/exporter.js';
import { renderLandingPage } from '../../src/outputs/landing-page.js';
import { startFakeCtxWorker } from '../helpers/fake-ctx-worker.js';
import { repoRoot } from '../helpers/paths.js';
import { runTool } from '../helpers/prom-tools.js';
import { eventually } from '../helpers/recording-sink.js';
import { serverStats, snapshotFixture } from '../helpers/snapshot-fixture.js';
import { cleanupsAfterEach, freePort } from '../helpers/test-resources.js';

const cleanups = cleanupsAfterEach();

describe("operators' files", () => {
  it('a running serve: /metrics passes promtool check metrics whole; / shows its own tail command', async () => {
    const worker = await startFakeCtxWorker();
    cleanups.push(() => worker.close());
    const [relay, web] = [await freePort(), await freePort()];
    const child = spawn(process.execPath, [
      join(repoRoot, 'dist/cli/main.js'),
      'serve',
      '--relay',
      `ctx0=${worker.url}@${relay}`,
      '--web.listen-address',
      `127.0.0.1:${web}`,
    ]);
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
    cleanups.push(async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    });
    await eventually(() => err.includes('kvsentinel serving'), 15_000, 'serve to start');
    const metrics = await (await request(`http://127.0.0.1:${web}/metrics`)).body.text();
    expect(metrics).toContain('process_cpu_seconds_total');
    expect(metrics).toContain('nodejs_active_handles{');
    const check = await runTool('promtool', ['check', 'metrics'], metrics);
    expect(check.stdout + check.stderr).toBe('');
    expect(check.code).toBe(0);
    const page = await (await request(`http://127.0.0.1:${web}/`)).body.text();
    expect(page).toContain(`kvsentinel tail http://127.0.0.1:${web}`);
    child.kill('SIGTERM');
    await exited;
  }, 60_000);

  it("the lint is real: prom-client's *_total gauges would fail it", async () => {
    const r = await runTool(
      'promtool',
      ['check', 'metrics'],
      '# HELP nodejs_active_handles_total x\n# TYPE nodejs_active_handles_total gauge\nnodejs_active_handles_total 3\n',
    );
    expect(r.stdout + r.stderr).toContain('non-counter metrics should not have "_total" suffix');
  });

  it('exports each finding per CTX server (the label the finding alerts carry), 0 where it does not hold', async () => {
    const finding = {
      id: 'events-absent' as const,
      severity: 'critical' as const,
      servers: ['ctx1'],
      summary: 'ctx1 emits no events',
      evidence: {},
      cause: 'docs/trtllm-wire.md §7.1',
      fix: 'event_buffer_max_size',
      since: 1,
    };
    const exporter = createExporter({
      registry: new Registry(),
      sources: () => [],
      snapshot: () => snapshotFixture({ findings: [finding], servers: [serverStats('ctx0'), serverStats('ctx1')] }),
      reload: () => ({ successful: true, lastSuccessAt: 1 }),
      build: { version: '0', revision: 'x', nodejsVersion: process.version },
      logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
      defaultMetrics: false,
    });
    const text = await exporter.metrics();
    expect(text).toContain('kvsentinel_finding_server_active{id="events-absent",severity="critical",server="ctx1"} 1');
    expect(text).toContain('kvsentinel_finding_server_active{id="events-absent",severity="critical",server="ctx0"} 0');
    expect(text).toContain('kvsentinel_finding_server_active{id="events-absent",severity="critical",server=""} 0');
    expect(text).toContain(
      'kvsentinel_finding_server_active{id="cache-signal-inert",severity="critical",server="ctx1"} 0',
    );
  });

  it('deploy/prometheus/prometheus.yml passes promtool check config, scrapes job kvsentinel and loads the rules', async () => {
    const file = join(repoRoot, 'deploy/prometheus/prometheus.yml');
    const r = await runTool('promtool', ['check', 'config', file]);
    expect(r.stdout + r.stderr).toContain('SUCCESS: 1 rule files found');
    expect(r.code).toBe(0);
    const doc = parseYaml(readFileSync(file, 'utf8')) as {
      rule_files: string[];
      scrape_configs: { job_name: string }[];
    };
    expect(doc.scrape_configs.map((s) => s.job_name)).toEqual(['kvsentinel']);
    expect(doc.rule_files).toEqual(['../../alerts/kvsentinel.rules.yaml']);
  });

  it("alerts/runbook.md has a section for every warning finding and the finding alerts link this repository's runbook", () => {
    const runbook = readFileSync(join(repoRoot, 'alerts/runbook.md'), 'utf8');
    const sections = new Set([...runbook.matchAll(/^### ([a-z-]+)$/gm)].map((m) => m[1]!));
    for (const id of FINDING_IDS.filter((i) => FINDING_CATALOG[i] === 'warning'))
      expect(sections.has(id), `runbook section for ${id}`).toBe(true);
    const rules = readFileSync(join(repoRoot, 'alerts/kvsentinel.rules.yaml'), 'utf8');
    const links = [...rules.matchAll(/runbook_url: '(.+)'$/gm)].map((m) => m[1]!);
    expect(links.length).toBeGreaterThan(10);
    for (const link of links) {
      // absolute: this project's runbook, unless the evaluating Prometheus names its own copy
      const [base, anchor] = link.split('#');
      expect(base).toBe(
        '{{ or $externalLabels.kvsentinel_runbook_url "https://github.com/kvsentinel/kvsentinel/blob/main/alerts/runbook.md" }}',
      );
      expect(runbook.toLowerCase()).toContain(`## ${anchor!}\n`);
    }
  });

  it('the landing page reloads itself and names the tail command of the sidecar serving it', () => {
    const html = renderLandingPage({
      version: '0',
      self: 'http://10.0.0.7:9464',
      verdict: 'healthy',
      sources: [],
      findings: [],
      relays: [],
    });
    expect(html).toContain('<meta http-equiv="refresh" content="10">');
    expect(html).toContain('kvsentinel tail http://10.0.0.7:9464');
  });
});
