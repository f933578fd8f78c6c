// Time as people read it, the same in every output: the HTML report (file and live page, rendered on the server),
// the text report and `kvsentinel tail` print local time with its offset, relative times and durations through one
// formatter (src/outputs/time-text.ts), and none of them formats a time by hand any more.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Chalk } from 'chalk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatLiveFrame } from '../../src/cli/reporters/live-frame-text.js';
import { TailSummary } from '../../src/cli/reporters/tail-view.js';
import { renderText } from '../../src/cli/reporters/text.js';
import type { AuditReport } from '../../src/core/report/audit-report.js';
import { buildReportModel } from '../../src/core/report/report-model.js';
import { renderLiveReportPage } from '../../src/outputs/report/live-report-page.js';
import { renderReportDocument } from '../../src/outputs/report/report-html.js';
import { inertFinding } from '../helpers/snapshot-fixture.js';
import { repoRoot } from '../helpers/paths.js';

const plain = new Chalk({ level: 0 });
// 2026-12-02T13:03:12.042Z; the finding held since three minutes before
const NOW = Date.UTC(2026, 11, 2, 13, 3, 12, 42);
const SINCE = NOW - 3 * 60_000;

describe('time in the outputs', () => {
  const tz = process.env.TZ;
  beforeEach(() => {
    process.env.TZ = 'Europe/Berlin';
  });
  afterEach(() => {
    if (tz === undefined) delete process.env.TZ;
    else process.env.TZ = tz;
  });

  const report: AuditReport = {
    verdict: 'inert',
    findings: [{ ...inertFinding, since: SINCE }],
    stats: {
      requests: 10,
      cache_hit_ratio: 0.5,
      oracle_hit_ratio: 0.9,
      oracle_basis: 'worker-truth',
      turn_scatter_ratio: 0.1,
      stickiness: 0.4,
      tokens_lost_per_second: 12,
      window_seconds: 75,
      router_tokens_per_block: 32,
      router_tokens_per_block_from: 'inferred',
    },
    servers: [],
    source: { kind: 'live', description: 'test', observations: 1, malformed: 0 },
    rule_errors: 0,
    notes: [],
  };

  it('the HTML report: local time with its offset, and how long ago', () => {
    const html = renderReportDocument(
      buildReportModel({ version: 't', generatedAt: NOW, audit: report, samples: [], input: null }),
    );
    expect(html).toContain('1 observations, 1 minute 15 seconds · rendered 2026-12-02 14:03:12 +01:00 by kvsentinel');
    expect(html).toContain('<dt>since</dt><dd>2026-12-02 14:00:12 +01:00 (3 minutes ago)</dd>');
    // the live page formats no time in the browser: it shows what each frame's server rendering says
    const live = renderLiveReportPage(
      buildReportModel({ version: 't', generatedAt: NOW, audit: report, samples: [], input: null }),
      '',
    );
    expect(live).toContain("last=typeof f.updated==='string'?f.updated:''");
    expect(live).not.toMatch(/Date\.now\(\)|toLocale|getHours/);
  });

  it('the text report says since when each finding holds', () => {
    expect(renderText(report, plain, NOW)).toContain('since: 2026-12-02 14:00:12 +01:00 (3 minutes ago)');
  });

  it("the text report's steady-state line (the demo's): the window's hit, its length and the warm-up's", () => {
    expect(renderText(report, plain, NOW)).not.toContain('Steady:');
    const steady: AuditReport = {
      ...report,
      steady_state: {
        warmup_target_requests: 1200,
        warmup_requests: 1204,
        warmup_seconds: 38.4,
        requests: 1512,
        seconds: 61.2,
        cache_hit_ratio: 0.9012,
        stickiness: 0.4,
      },
    };
    expect(renderText(steady, plain, NOW)).toContain(
      'Steady:  cache hit 90.1% · stickiness 40.0% over the 1,512 requests of the last 1 minute 1 second, after a warm-up of 1,204 requests (38 seconds; the stats above include it)',
    );
  });

  it('tail: local clock times, the zone once, recent changes with how long ago', () => {
    expect(formatLiveFrame({ type: 'hello', ts: NOW, version: '0.1.0' }, plain)).toBe(
      '14:03:12.042 connected to kvsentinel 0.1.0 (times are local, UTC+01:00)',
    );
    expect(formatLiveFrame({ type: 'source', ts: NOW, source: 'relay:ctx0', up: true }, plain)).toMatch(
      /^14:03:12\.042 source relay:ctx0 up$/,
    );
    const summary = new TailSummary();
    summary.add({ type: 'finding', ts: SINCE, change: 'raised', id: 'cache-signal-inert', severity: 'critical' });
    const screen = summary.render('ws://127.0.0.1:9464/ws', plain, NOW);
    expect(screen.split('\n')[0]).toBe('kvsentinel tail ws://127.0.0.1:9464/ws   14:03:12 UTC+01:00');
    expect(screen).toContain('  14:00:12 (3 minutes ago) raised cache-signal-inert');
  });

  it('no output formats a time by hand', () => {
    const files = [
      'src/outputs/report/report-html.ts',
      'src/outputs/report/live-report-page.ts',
      'src/outputs/report/svg-chart.ts',
      'src/cli/reporters/text.ts',
      'src/cli/reporters/tail-view.ts',
      'src/cli/reporters/live-frame-text.ts',
    ];
    for (const f of files) {
      const text = readFileSync(join(repoRoot, f), 'utf8');
      expect(text, f).not.toMatch(/toISOString\(\)|padStart\(2, '0'\)|getHours\(|getMinutes\(/);
    }
  });
});
