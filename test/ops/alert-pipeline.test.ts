// End to end: a scrape target → a real Prometheus (1 s scrape and evaluation, the shipped rules with short for:) →
// a real Alertmanager → a webhook receiver. With the seed faults KvCacheSignalInert and the alert for its cause
// arrive; with the healthy configuration no critical alert arrives. Every dashboard query returns series.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDashboards, panelsOf, queriesOf } from '../helpers/dashboards.js';
import { startPromStack, type PromStack } from '../helpers/prom-stack.js';
import { liveSimTargetFactory } from '../helpers/live-sim-target.js';
import { syntheticTargetFactory, type ScrapeTarget, type TargetFactory } from '../helpers/scrape-targets.js';

/** Grafana's substitution for "All" on job/instance/server and a range Prometheus can fill after a few scrapes. */
function asGrafanaWould(expr: string): string {
  return expr.replace(/\$__rate_interval/g, '1m').replace(/\$(job|instance|server)\b/g, '.+');
}

function alertPipelineSuite(name: string, factory: TargetFactory): void {
  describe(`alert pipeline (${name})`, () => {
    // Both stacks start together: the healthy one needs to sit through several evaluations anyway.
    let seed: { target: ScrapeTarget; stack: PromStack };
    let healthy: { target: ScrapeTarget; stack: PromStack };
    const started: { target: ScrapeTarget; stack?: PromStack }[] = [];
    const start = async (scenario: 'seed' | 'healthy'): Promise<{ target: ScrapeTarget; stack: PromStack }> => {
      const entry: { target: ScrapeTarget; stack?: PromStack } = { target: await factory(scenario) };
      started.push(entry);
      entry.stack = await startPromStack({ target: entry.target.address });
      return { target: entry.target, stack: entry.stack };
    };
    beforeAll(async () => {
      [seed, healthy] = await Promise.all([start('seed'), start('healthy')]);
    });
    afterAll(async () => {
      await Promise.all(
        started.map(async (e) => {
          await e.stack?.stop();
          await e.target.close();
        }),
      );
    });

    it('with the seed faults, delivers KvCacheSignalInert and the alert for its cause to the webhook', async () => {
      const { target, stack } = seed;
      const expected = ['KvCacheSignalInert', ...target.causeAlerts];
      expect(target.causeAlerts.length).toBeGreaterThan(0);
      const got = await stack.waitFor(`firing ${expected.join(', ')} at the webhook`, () => {
        const firing = stack.webhook.alerts().filter((a) => a.status === 'firing');
        const all = expected.map((n) => firing.find((a) => a.labels.alertname === n));
        return all.every((a) => a !== undefined) ? all : undefined;
      });
      for (const a of got) {
        expect(a?.labels).toMatchObject({ severity: 'critical', job: 'kvsentinel', instance: target.address });
        expect(a?.annotations.runbook_url).toMatch(
          new RegExp(`runbook\\.md#${(a?.labels.alertname ?? '').toLowerCase()}$`),
        );
        expect(a?.annotations.description).toContain(target.address);
        expect(a?.endsAt).toBe('0001-01-01T00:00:00Z');
      }
      const msg = stack.webhook.messages.find((m) => m.alerts.some((a) => a.labels.alertname === 'KvCacheSignalInert'));
      expect(msg?.version).toBe('4');
      expect(msg?.receiver).toBe('hook');
    });

    it('with the seed faults, every dashboard shows data: each query and variable returns series', async () => {
      const { target, stack } = seed;
      // Recording rules need two scrapes and an evaluation before ratios exist; the alerts panel needs a firing alert.
      await waitForRecordedRatio(stack);
      await stack.waitFor('a firing Kv alert', async () => {
        const r = await stack.query('ALERTS{alertname=~"Kv.+", alertstate="firing"}');
        return r.length > 0 ? r : undefined;
      });
      const empty: string[] = [];
      let count = 0;
      for (const d of loadDashboards()) {
        let withData = 0;
        for (const p of panelsOf(d.json)) {
          let panelHasData = true;
          for (const t of p.targets ?? []) {
            count++;
            const result = await stack.query(asGrafanaWould(t.expr ?? ''));
            if (result.length === 0) panelHasData = false;
          }
          if (panelHasData) withData++;
          else if (!target.mayBeEmpty.has(p.title ?? '')) empty.push(`${d.file} "${p.title ?? '?'}"`);
        }
        // A dashboard "shows data" only if most of it does, whatever the allowances.
        expect(withData, `${d.file} panels with data`).toBeGreaterThanOrEqual(Math.ceil(panelsOf(d.json).length / 2));
        for (const v of d.json.templating?.list ?? []) {
          if (v.type !== 'query') continue;
          const m = /^label_values\((.+), (\w+)\)$/.exec(String(v.query));
          const values = await stack.labelValues(m?.[2] ?? '', asGrafanaWould(m?.[1] ?? ''));
          if (values.length === 0) empty.push(`${d.file} variable ${v.name}`);
        }
      }
      expect(count).toBeGreaterThan(20);
      expect(empty).toEqual([]);
      // And the headline panels say the right thing: inert (3: healthy 0, degraded 1, unknown 2, inert 3), and tokens lost.
      expect(await panelValues(stack, 'kvsentinel-overview.json', 'Verdict')).toEqual([3]);
      expect((await panelValues(stack, 'kvsentinel-overview.json', 'Tokens lost per second'))[0]).toBeGreaterThan(0);
    });

    it('with the healthy configuration, delivers no critical alert', async () => {
      const { target, stack } = healthy;
      expect(target.causeAlerts).toEqual([]);
      await waitForRecordedRatio(stack);
      await stack.waitFor(`${target.minRequests} requests counted by the sidecar`, async () => {
        const r = await stack.query('sum(kvsentinel_requests_total{job="kvsentinel"})');
        return Number(r[0]?.value[1] ?? 0) >= target.minRequests ? r : undefined;
      });
      // Then several evaluation cycles longer than for: (1 s) + group_interval (1 s); a wrong rule would fire now.
      const evaluatedAt = Date.now();
      await stack.waitFor('five more rule evaluations', () => (Date.now() - evaluatedAt > 5000 ? true : undefined));
      const pendingOrFiring = await stack.query('ALERTS{severity="critical"}');
      expect(pendingOrFiring.map((s) => s.metric.alertname)).toEqual([]);
      expect(stack.webhook.alerts().filter((a) => a.labels.severity === 'critical')).toEqual([]);
      // The scrape itself worked: the sidecar is up and no Kv alert of any severity fires.
      expect((await stack.query('up{job="kvsentinel"} == 1')).length).toBe(1);
      expect(
        (await stack.query('ALERTS{alertname=~"Kv.+", alertstate="firing"}')).map((s) => s.metric.alertname),
      ).toEqual([]);
      expect(await panelValues(stack, 'kvsentinel-overview.json', 'Verdict')).toEqual([0]);
      expect(await panelValues(stack, 'kvsentinel-overview.json', 'Critical findings')).toEqual([0]);
    });
  });
}

/** The values one dashboard panel's first query returns, as Grafana would run it. */
async function panelValues(stack: PromStack, file: string, title: string): Promise<number[]> {
  const d = loadDashboards().find((x) => x.file === file);
  const q = d === undefined ? undefined : queriesOf(d).find((x) => x.panel === title);
  if (q === undefined) throw new Error(`${file} has no panel "${title}"`);
  return (await stack.query(asGrafanaWould(q.expr))).map((r) => Number(r.value[1]));
}

async function waitForRecordedRatio(stack: PromStack): Promise<void> {
  // the fleet group reads the per-sidecar group's series, so its first results come an evaluation later
  for (const series of [
    'instance:kvsentinel_cached_tokens_per_prompt_tokens:ratio_rate5m',
    'job:kvsentinel_cached_tokens_per_prompt_tokens:ratio_rate5m',
    'instance:kvsentinel_servers:count',
  ]) {
    await stack.waitFor(`the recorded ${series}`, async () => {
      const r = await stack.query(series);
      return r.length > 0 ? r : undefined;
    });
  }
}

alertPipelineSuite('synthetic exporter generated from the metric catalog', syntheticTargetFactory);
alertPipelineSuite('live simulator behind the real sidecar', liveSimTargetFactory);
