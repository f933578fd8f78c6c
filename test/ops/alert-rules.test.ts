import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { FINDING_CATALOG, FINDING_IDS, GRADED_FINDINGS } from '../../src/core/diagnosis/finding-catalog.js';
import { repoRoot } from '../helpers/paths.js';
import {
  alertRules,
  loadRuleGroups,
  recordingRuleNames,
  RULE_TESTS_FILE,
  RULES_FILE,
  runTool,
} from '../helpers/prom-tools.js';
import { classifyMetricName, selectorsOf } from '../helpers/promql.js';

const groups = loadRuleGroups();
const alerts = alertRules(groups);
const recorded = recordingRuleNames(groups);

function pascal(id: string): string {
  return id.replace(/(^|-)([a-z])/g, (_m, _d: string, c: string) => c.toUpperCase());
}

/** the project's published runbook: the default base of every alert's runbook_url */
const PROJECT_RUNBOOK = 'https://github.com/kvsentinel/kvsentinel/blob/main/alerts/runbook.md';

describe('alerts/kvsentinel.rules.yaml', () => {
  it('passes promtool check rules with lint errors fatal', async () => {
    const r = await runTool('promtool', ['check', 'rules', '--lint-fatal', RULES_FILE]);
    expect(r.stderr + r.stdout).toContain('SUCCESS');
    expect(r.code).toBe(0);
  });

  it('passes its promtool unit tests', async () => {
    const r = await runTool('promtool', ['test', 'rules', RULE_TESTS_FILE]);
    expect(r.stdout + r.stderr).toContain('SUCCESS');
    expect(r.code).toBe(0);
  });

  it('has one alert per critical finding, named Kv + the id, and none for lesser findings', () => {
    for (const id of FINDING_IDS) {
      const selecting = alerts.filter((a) => a.expr.includes(`id="${id}"`));
      if (FINDING_CATALOG[id] === 'critical') {
        expect(
          selecting.map((a) => a.alert),
          id,
        ).toEqual([`Kv${pascal(id)}`]);
        expect(selecting[0]?.labels?.severity, id).toBe('critical');
        // a graded finding also holds as a warning: its alert selects the critical series only
        const selector = GRADED_FINDINGS.includes(id) ? `id="${id}",severity="critical"` : `id="${id}"`;
        // one alert per CTX server the finding holds for: the series carry the server label
        expect(selecting[0]?.expr, id).toBe(`max_over_time(kvsentinel_finding_server_active{${selector}}[5m]) == 1`);
      } else {
        expect(selecting, id).toEqual([]);
      }
    }
  });

  it('has the source-health, sidecar-down and sidecar-absent alerts', () => {
    const byName = new Map(alerts.map((a) => [a.alert, a]));
    expect(byName.get('KvSentinelSourceDown')?.expr).toContain('kvsentinel_up');
    expect(byName.get('KvSentinelDown')?.expr).toBe('up{job=~"kvsentinel.*"} == 0');
    expect(byName.get('KvSentinelAbsent')?.expr).toBe('absent(up{job="kvsentinel"})');
  });

  it('gives every alert a CamelCase name, a severity, a for, and summary/description/runbook_url', () => {
    const runbook = readFileSync(join(repoRoot, 'alerts/runbook.md'), 'utf8');
    const headings = new Set([...runbook.matchAll(/^## (\S+)$/gm)].map((m) => (m[1] ?? '').toLowerCase()));
    const names = alerts.map((a) => a.alert);
    expect(new Set(names).size).toBe(names.length);
    for (const a of alerts) {
      const name = a.alert ?? '';
      expect(name).toMatch(/^Kv(?:[A-Z][a-z]+)+$/);
      expect(['critical', 'warning', 'info'], name).toContain(a.labels?.severity);
      expect(a.for, name).toMatch(/^\d+m$/);
      const ann = a.annotations ?? {};
      expect(ann.summary, name).toMatch(/^[A-Za-z].*\.$/);
      // a finding alert's summary names its CTX server; the others are fixed sentences
      if (a.expr.includes('kvsentinel_finding_server_active'))
        expect(ann.summary, name).toContain('{{ $labels.server }}');
      else expect(ann.summary, name).not.toContain('{{');
      expect(ann.description, name).toContain('{{ $labels.');
      // absolute: the project's runbook unless the evaluating Prometheus names its own copy (promtool checks both)
      expect(ann.runbook_url, name).toBe(
        `{{ or $externalLabels.kvsentinel_runbook_url "${PROJECT_RUNBOOK}" }}#${name.toLowerCase()}`,
      );
      expect(headings.has(name.toLowerCase()), `runbook.md has a "## ${name}" section`).toBe(true);
    }
    expect(headings.size).toBe(alerts.length);
    // Each section says what the alert means, how to confirm it and how to fix it.
    for (const section of runbook.split(/^## /m).slice(1)) {
      const title = section.split('\n')[0] ?? '';
      for (const part of ['**Meaning.**', '**Confirm.**', '**Fix.**'])
        expect(section, `${title}: ${part}`).toContain(part);
    }
  });

  it('selects only metrics the exporter registers, recording rules it defines, and up', () => {
    for (const g of groups) {
      for (const r of g.rules) {
        for (const s of selectorsOf(r.expr)) {
          expect(s.name, r.expr).not.toBeNull();
          const kind = classifyMetricName(s.name ?? '', recorded);
          expect(kind, `${s.name ?? ''} in ${r.expr}`).not.toBeNull();
          if (kind === 'counter') expect(s.rangeFunction, `${s.name ?? ''} must be inside rate()`).toBe('rate');
        }
      }
    }
  });

  it('names recording rules level:metric:operation, aggregated by the labels their level names', () => {
    // instance: one sidecar; job: the fleet of sidecars (docs/sharding.md); job_server: one server across sidecars
    const levelLabels: Record<string, string> = { instance: 'job, instance', job: 'job', job_server: 'job, server' };
    for (const g of groups) {
      for (const r of g.rules.filter((x) => x.record !== undefined)) {
        const m = /^(instance|job|job_server):kvsentinel_[a-z_]+:(ratio_rate5m|rate5m|max|count)$/.exec(r.record ?? '');
        expect(m, r.record).not.toBeNull();
        const level = levelLabels[m?.[1] ?? ''] ?? '';
        // arithmetic over recorded series of the same level keeps their labels; every other rule aggregates
        const sameLevel = selectorsOf(r.expr).every((sel) => sel.name?.startsWith(`${m?.[1] ?? ''}:`) === true);
        if (!sameLevel) expect(r.expr, r.record).toContain(`by (${level})`);
      }
    }
  });

  it('ships an example Alertmanager config amtool accepts', async () => {
    const r = await runTool('amtool', ['check-config', join(repoRoot, 'alerts/alertmanager.example.yml')]);
    expect(r.stdout).toContain('SUCCESS');
    expect(r.code).toBe(0);
  });

  it('has a firing and a not-firing promtool case for every alert', () => {
    interface Case {
      alertname: string;
      exp_alerts?: unknown[];
    }
    const doc = parseYaml(readFileSync(RULE_TESTS_FILE, 'utf8')) as { tests: { alert_rule_test?: Case[] }[] };
    const cases = doc.tests.flatMap((t) => t.alert_rule_test ?? []);
    for (const a of alerts) {
      const mine = cases.filter((c) => c.alertname === a.alert);
      expect(
        mine.some((c) => (c.exp_alerts ?? []).length > 0),
        `${a.alert ?? ''} firing case`,
      ).toBe(true);
      expect(
        mine.some((c) => (c.exp_alerts ?? []).length === 0),
        `${a.alert ?? ''} not-firing case`,
      ).toBe(true);
    }
  });
});
