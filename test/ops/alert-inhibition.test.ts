// One page per root cause. `kvsentinel demo` (the bug report's seed: events off, router tokens_per_block 32 against
// the workers' 128) holds four critical findings on every CTX server — events-absent and tokens-per-block-mismatch
// (the two causes), router-table-empty and cache-signal-inert (which restate them). A real Prometheus evaluates the
// shipped rules against the demo's sidecar and a real Alertmanager routes them with alerts/alertmanager.example.yml
// (its routes, grouping and inhibit_rules; the receivers' URLs pointed at a test webhook, the waits shortened): the
// on-call receiver gets exactly one notification per cause, each holding every server, and none for the restating
// alerts, which Alertmanager holds as suppressed by the cause's alerts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { repoRoot } from '../helpers/paths.js';
import { startPromStack, type PromStack } from '../helpers/prom-stack.js';
import { alertRules } from '../helpers/prom-tools.js';
import { spawnCli } from '../helpers/run-cli.js';
import { cleanupsAfterEach, freePort } from '../helpers/test-resources.js';

const EXAMPLE = join(repoRoot, 'alerts/alertmanager.example.yml');
const CAUSES = ['KvEventsAbsent', 'KvTokensPerBlockMismatch'];
const RESTATING = ['KvRouterTableEmpty', 'KvCacheSignalInert'];
const SEED_FINDINGS = ['events-absent', 'tokens-per-block-mismatch', 'router-table-empty', 'cache-signal-inert'];
const SERVERS = ['ctx0', 'ctx1', 'ctx2'];

interface InhibitRule {
  source_matchers: string[];
  target_matchers: string[];
  equal: string[];
}
interface AmConfig {
  route: Record<string, unknown> & { routes?: { receiver: string; matchers: string[] }[] };
  receivers: { name: string; webhook_configs?: { url: string }[] }[];
  inhibit_rules: InhibitRule[];
}

function example(): AmConfig {
  return parseYaml(readFileSync(EXAMPLE, 'utf8')) as AmConfig;
}

/** The alertnames an `alertname=~"A|B"` or `alertname="A"` matcher names. */
function alertnames(matchers: readonly string[]): string[] {
  return matchers.flatMap((m) => {
    const r = /^alertname(=~|=)"([^"]+)"$/.exec(m);
    return r === null ? [] : r[2]!.split('|');
  });
}

/** The example with every receiver's webhook at `url` and the waits short enough for a test. */
function exampleFor(url: string): Record<string, unknown> {
  const c = example();
  for (const r of c.receivers) for (const w of r.webhook_configs ?? []) w.url = url;
  c.route = { ...c.route, group_wait: '2s', group_interval: '1s', repeat_interval: '1h' };
  return c as unknown as Record<string, unknown>;
}

describe('Alertmanager: one page per root cause', () => {
  const cleanups = cleanupsAfterEach();

  it('classifies every finding alert as a cause or a restatement of one', () => {
    const findingAlerts = alertRules()
      .filter((r) => r.expr.includes('kvsentinel_finding_server_active'))
      .map((r) => r.alert);
    const rules = example().inhibit_rules;
    const targets = new Set(rules.flatMap((r) => alertnames(r.target_matchers)));
    const sources = new Set(rules.flatMap((r) => alertnames(r.source_matchers)));
    expect([...targets].filter((t) => findingAlerts.includes(t)).sort()).toEqual([...RESTATING].sort());
    const inertSources = rules.find((r) => alertnames(r.target_matchers).includes('KvCacheSignalInert'));
    // every other finding alert names a cause the inert signal restates
    expect(alertnames(inertSources?.source_matchers ?? []).sort()).toEqual(
      findingAlerts.filter((a) => a !== 'KvCacheSignalInert').sort(),
    );
    for (const c of CAUSES) expect(sources.has(c), c).toBe(true);
  });

  it('the seed pages once per root cause per server group, through the real Alertmanager', async () => {
    const port = await freePort();
    const demo = spawnCli(
      ['demo', '--duration', '10m', '--no-progress', '--web.listen-address', `127.0.0.1:${port}`],
      cleanups,
    );
    // every seed finding on every server before Prometheus starts: the alerts then reach Alertmanager together
    const metrics = `http://127.0.0.1:${port}/metrics`;
    for (;;) {
      const text = await fetch(metrics).then(
        (r) => r.text(),
        () => '',
      );
      const active = SEED_FINDINGS.every((id) =>
        SERVERS.every((s) =>
          text.includes(`kvsentinel_finding_server_active{id="${id}",severity="critical",server="${s}"} 1`),
        ),
      );
      if (active) break;
      if (/error|exited/i.test(demo.err()) && text === '') throw new Error(`demo failed: ${demo.err()}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const stack: PromStack = await startPromStack({ target: `127.0.0.1:${port}`, alertmanagerConfig: exampleFor });
    cleanups.push(() => stack.stop());

    await stack.waitFor('the four seed alerts firing on every server in Prometheus', async () => {
      const r = await stack.query(`ALERTS{alertstate="firing", alertname=~"${[...CAUSES, ...RESTATING].join('|')}"}`);
      return r.length === 12 ? r : undefined;
    });
    const am = async (): Promise<
      { labels: Record<string, string>; status: { state: string; inhibitedBy: string[] } }[]
    > =>
      (await fetch(`${stack.alertmanagerUrl}/api/v2/alerts`)).json() as Promise<
        { labels: Record<string, string>; status: { state: string; inhibitedBy: string[] } }[]
      >;
    const held = await stack.waitFor('the restating alerts suppressed by their causes in Alertmanager', async () => {
      const alerts = (await am()).filter((a) => [...CAUSES, ...RESTATING].includes(a.labels.alertname ?? ''));
      const restating = alerts.filter((a) => RESTATING.includes(a.labels.alertname ?? ''));
      return alerts.length === 12 && restating.every((a) => a.status.state === 'suppressed') ? alerts : undefined;
    });
    for (const a of held) {
      if (CAUSES.includes(a.labels.alertname!)) expect(a.status.state, a.labels.alertname).toBe('active');
      else expect(a.status.inhibitedBy.length, a.labels.alertname).toBeGreaterThan(0);
    }
    const pages = () => stack.webhook.messages.filter((m) => m.receiver === 'llm-serving-oncall');
    await stack.waitFor('a page per cause', () =>
      CAUSES.every((c) => pages().some((m) => m.groupLabels.alertname === c)) ? true : undefined,
    );
    // the restating groups flush on the same group_wait and again every group_interval: a few more of those
    const notifiedAt = Date.now();
    await stack.waitFor('three more group intervals', () => (Date.now() - notifiedAt > 3000 ? true : undefined));

    expect(
      pages()
        .map((m) => m.groupLabels.alertname)
        .sort(),
    ).toEqual([...CAUSES].sort());
    for (const m of pages()) {
      expect(m.status).toBe('firing');
      expect(m.alerts.map((a) => a.labels.server).sort()).toEqual(SERVERS);
      expect(m.alerts.every((a) => a.labels.severity === 'critical' && a.labels.job === 'kvsentinel')).toBe(true);
    }
    const delivered = stack.webhook.alerts().map((a) => a.labels.alertname);
    expect(delivered.filter((n) => RESTATING.includes(n ?? ''))).toEqual([]);
  }, 120_000);
});
