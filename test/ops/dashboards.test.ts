import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { METRICS } from '../../src/outputs/metric-catalog.js';
import { loadDashboards, panelsOf, queriesOf } from '../helpers/dashboards.js';
import { loadRuleGroups, recordingRuleNames, runTool } from '../helpers/prom-tools.js';
import { classifyMetricName, selectorsOf, substituteGrafanaVariables } from '../helpers/promql.js';

const dashboards = loadDashboards();
const recorded = recordingRuleNames();
// Grafana's built-in unit ids the dashboards may use.
const UNITS = new Set(['s', 'ms', 'bytes', 'percentunit', 'reqps', 'ops', 'cps', 'short', 'none', 'bool']);
const DS = { type: 'prometheus', uid: '${datasource}' };

describe('dashboards/', () => {
  it('holds the overview, KV events and routing dashboards', () => {
    expect(dashboards.map((d) => d.json.uid)).toEqual([
      'kvsentinel-kv-events',
      'kvsentinel-overview',
      'kvsentinel-routing',
    ]);
    for (const d of dashboards) expect(d.file).toBe(`${d.json.uid ?? ''}.json`);
  });

  for (const d of dashboards) {
    describe(d.file, () => {
      const j = d.json;

      it('is provisioning-ready: fixed uid, schemaVersion 39, no __inputs or ${DS_…}, not editable', () => {
        expect(j.uid).toMatch(/^[A-Za-z0-9_-]{1,40}$/);
        expect(j.id ?? null).toBeNull();
        expect(j.schemaVersion).toBe(39);
        expect(j.__inputs).toBeUndefined();
        expect(d.raw).not.toMatch(/\$\{DS_/);
        expect(j.editable).toBe(false);
        expect(j.title).toMatch(/^kvsentinel \/ /);
        expect(j.tags).toContain('kvsentinel');
        expect(j.graphTooltip).toBe(1);
        expect(j.time).toBeDefined();
        expect(j.refresh).toBeTruthy();
      });

      it('has the datasource, job and instance variables dashboard-linter expects', () => {
        const vars = new Map((j.templating?.list ?? []).map((v) => [v.name, v]));
        expect(vars.get('datasource')).toMatchObject({ type: 'datasource', query: 'prometheus', label: 'Data source' });
        const common = { type: 'query', datasource: DS, multi: true, includeAll: true, allValue: '.+', refresh: 2 };
        expect(vars.get('job')).toMatchObject({ ...common, query: 'label_values(kvsentinel_up, job)' });
        expect(vars.get('instance')).toMatchObject({
          ...common,
          query: 'label_values(kvsentinel_up{job=~"$job"}, instance)',
        });
        for (const v of vars.values()) {
          if (v.type !== 'query') continue;
          expect(v.datasource, v.name).toEqual(DS);
          expect(typeof v.query, v.name).toBe('string');
          const q = /^label_values\((.+), (\w+)\)$/.exec(v.query as string);
          expect(q, v.name).not.toBeNull();
          for (const s of selectorsOf(q?.[1] ?? ''))
            expect(classifyMetricName(s.name ?? '', recorded), v.name).not.toBeNull();
        }
      });

      it('gives every panel the datasource variable, a title, a description and a unit', () => {
        const panels = panelsOf(j);
        expect(panels.length).toBeGreaterThan(3);
        const ids = panels.map((p) => p.id);
        expect(new Set(ids).size).toBe(ids.length);
        for (const p of panels) {
          const where = `${d.file} panel "${p.title ?? '?'}"`;
          expect(p.datasource, where).toEqual(DS);
          expect(p.title, where).toBeTruthy();
          expect((p.description ?? '').length, `${where} description`).toBeGreaterThan(20);
          expect(UNITS, `${where} unit ${p.fieldConfig?.defaults?.unit ?? '(none)'}`).toContain(
            p.fieldConfig?.defaults?.unit,
          );
          expect((p.targets ?? []).length, `${where} targets`).toBeGreaterThan(0);
          const refIds = (p.targets ?? []).map((t) => t.refId);
          expect(new Set(refIds).size, where).toBe(refIds.length);
          for (const t of p.targets ?? []) {
            expect(t.refId, where).toMatch(/^[A-Z]$/);
            if (p.type === 'table') expect(t, where).toMatchObject({ format: 'table', instant: true });
          }
        }
      });

      it('lays panels out on the 24-column grid without overlaps', () => {
        const boxes = (j.panels ?? []).map((p) => ({ title: p.title ?? '?', g: p.gridPos }));
        for (const b of boxes) {
          expect(b.g, b.title).toBeDefined();
          expect((b.g?.x ?? 0) + (b.g?.w ?? 0), b.title).toBeLessThanOrEqual(24);
          expect(b.g?.h ?? 0, b.title).toBeGreaterThan(0);
        }
        for (let a = 0; a < boxes.length; a++) {
          for (let b = a + 1; b < boxes.length; b++) {
            const p = boxes[a]?.g;
            const q = boxes[b]?.g;
            if (p === undefined || q === undefined) continue;
            const overlap = p.x < q.x + q.w && q.x < p.x + p.w && p.y < q.y + q.h && q.y < p.y + p.h;
            expect(overlap, `"${boxes[a]?.title ?? ''}" overlaps "${boxes[b]?.title ?? ''}"`).toBe(false);
          }
        }
      });

      it('has queries that parse strictly after variable substitution and select only exported metrics', () => {
        for (const q of queriesOf(d)) {
          const where = `${q.dashboard} "${q.panel}" ${q.refId}`;
          const expr = substituteGrafanaVariables(q.expr);
          expect(expr, where).not.toContain('$__');
          const selectors = selectorsOf(expr);
          expect(selectors.length, where).toBeGreaterThan(0);
          for (const s of selectors) {
            expect(s.name, `${where}: selector without a metric name`).not.toBeNull();
            const kind = classifyMetricName(s.name ?? '', recorded);
            expect(kind, `${where}: ${s.name ?? ''} is not exported by kvsentinel`).not.toBeNull();
            // Counters (and histogram parts) only inside rate(); gauges never inside it.
            if (kind === 'counter' || kind === 'histogram-part')
              expect(s.rangeFunction, `${where}: ${s.name ?? ''}`).toBe('rate');
            else expect(s.rangeFunction, `${where}: ${s.name ?? ''}`).toBeNull();
            // dashboard-linter target-job / target-instance: every selector filters on both variables, except the
            // fleet's series (job: and job_server: recording rules), which have no instance to filter on.
            const fleetLevel = /^job(_server)?:/.test(s.name ?? '');
            const wanted = [{ label: 'job', op: '=~', value: '$job' }];
            if (!fleetLevel) wanted.push({ label: 'instance', op: '=~', value: '$instance' });
            expect(s.matchers, `${where}: ${s.name ?? ''}`).toEqual(expect.arrayContaining(wanted));
            if (fleetLevel)
              expect(
                s.matchers.map((x) => x.label),
                `${where}`,
              ).not.toContain('instance');
          }
          // target-rate-interval: the only range is $__rate_interval.
          for (const m of q.expr.matchAll(/\[([^\]]*)\]/g)) expect(m[1], where).toBe('$__rate_interval');
        }
      });
    });
  }

  it('uses every metric family the exporter registers somewhere in the dashboards', () => {
    const selected = dashboards.flatMap((d) =>
      queriesOf(d).flatMap((q) => selectorsOf(substituteGrafanaVariables(q.expr)).map((s) => s.name)),
    );
    // a recording rule a dashboard plots uses the families its expression selects (and the rules it reads)
    const ruleExprs = new Map(
      loadRuleGroups().flatMap((g) =>
        g.rules.flatMap((r) => (r.record === undefined ? [] : [[r.record, r.expr] as const])),
      ),
    );
    const used = new Set<string | null>();
    const visit = (name: string | null): void => {
      if (used.has(name)) return;
      used.add(name);
      const expr = ruleExprs.get(name ?? '');
      if (expr !== undefined) for (const s of selectorsOf(expr)) visit(s.name);
    };
    selected.forEach(visit);
    const families = Object.values(METRICS).map((m) => (m.type === 'histogram' ? `${m.name}_bucket` : m.name));
    // build_info and the config-reload gauges are for alerts and joins, not panels.
    const notPlotted = new Set([
      'kvsentinel_build_info',
      'kvsentinel_config_last_reload_successful',
      'kvsentinel_config_last_reload_success_timestamp_seconds',
    ]);
    expect(families.filter((f) => !used.has(f) && !notPlotted.has(f))).toEqual([]);
  });

  describe('type-checks every query with promtool', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kvs-dash-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    it('accepts all substituted expressions as recording rules', async () => {
      const all = dashboards.flatMap(queriesOf);
      const rules = all.map((q, i) => ({ record: `dashboard:check_${i}`, expr: substituteGrafanaVariables(q.expr) }));
      const file = join(dir, 'dashboard-exprs.yaml');
      writeFileSync(file, stringify({ groups: [{ name: 'dashboard-exprs', rules }] }));
      const r = await runTool('promtool', ['check', 'rules', file]);
      expect(r.stdout + r.stderr).toContain(`SUCCESS: ${rules.length} rules found`);
      expect(r.code).toBe(0);
    });
  });
});
