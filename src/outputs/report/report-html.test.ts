import { describe, expect, it } from 'vitest';
import type { AuditReport } from '../../core/report/audit-report.js';
import type { FindingId } from '../../core/diagnosis/finding-catalog.js';
import { buildReportModel } from '../../core/report/report-model.js';
import { sample } from '../../../test/helpers/timeline-samples.js';
import { renderLiveReportPage } from './live-report-page.js';
import { renderReportDocument } from './report-html.js';
import type { Finding } from '../../core/diagnosis/finding.js';

function finding(id: string, extra: Partial<Finding> = {}): Finding {
  return {
    id: id as FindingId,
    severity: 'warning',
    servers: ['ctx0'],
    summary: `${id} summary`,
    evidence: { requests: 120, ratio: 0.123456 },
    cause: `${id} cause`,
    fix: `${id}.fix: 1`,
    since: 0,
    ...extra,
  };
}

function audit(findings: readonly Finding[]): AuditReport {
  return {
    verdict: findings.length > 0 ? 'degraded' : 'healthy',
    findings,
    stats: {
      requests: 10,
      cache_hit_ratio: 0.5,
      oracle_hit_ratio: 0.9,
      oracle_basis: 'worker-truth',
      turn_scatter_ratio: 0.1,
      stickiness: 0.4,
      tokens_lost_per_second: 12,
      window_seconds: 60,
      router_tokens_per_block: 32,
      router_tokens_per_block_from: 'inferred',
    },
    servers: [],
    source: { kind: 'bundle', description: 'bundle <dir>', observations: 10, malformed: 0 },
    rule_errors: 0,
    notes: [],
  };
}

const samples = Array.from({ length: 6 }, (_, i) => sample(i * 1_000, i * 10));

describe('HTML report', () => {
  it('renders every finding from its data alone, a finding id it has never heard of included', () => {
    const html = renderReportDocument(
      buildReportModel({
        version: 't',
        generatedAt: 0,
        audit: audit([finding('events-absent'), finding('some-future-finding', { severity: 'info' })]),
        samples,
        input: null,
      }),
    );
    for (const id of ['events-absent', 'some-future-finding']) {
      expect(html).toContain(`data-finding="${id}"`);
      expect(html).toContain(`${id} cause`);
      expect(html).toContain(`${id}.fix: 1`);
    }
    // evidence in words, values as they read: no snake_case key on the page
    expect(html).toContain('<li data-evidence="ratio"><span class="dim">ratio</span> <b>0.1235</b></li>');
    expect(html).toContain('<span class="dim">requests</span> <b>120</b>');
  });

  it("a run that started cold (the demo) shows its steady-state hit and what the warm-up took; others don't", () => {
    const model = (a: AuditReport): string =>
      renderReportDocument(buildReportModel({ version: 't', generatedAt: 0, audit: a, samples, input: null }));
    expect(model(audit([]))).not.toContain('steady-state hit');
    const html = model({
      ...audit([]),
      steady_state: {
        warmup_target_requests: 1200,
        warmup_requests: 1210,
        warmup_seconds: 41,
        requests: 1500,
        seconds: 60,
        cache_hit_ratio: 0.9634,
        stickiness: 1,
      },
    });
    expect(html).toContain('<div><span class="dim">steady-state hit</span><b>96.3%</b></div>');
    expect(html).toMatch(/<span class="dim">after a warm-up of<\/span><b>1,210 requests, [^<]+<\/b>/);
  });

  it('escapes every string it shows', () => {
    const hostile = '<script>alert(1)</script>"\'&';
    const html = renderReportDocument(
      buildReportModel({
        version: hostile,
        generatedAt: 0,
        audit: audit([
          finding('x', {
            summary: hostile,
            cause: hostile,
            fix: hostile,
            servers: [hostile],
            evidence: { [hostile]: hostile },
          }),
        ]),
        samples,
        input: null,
      }),
    );
    expect(html).not.toContain('<script>');
    expect(html).toContain('&#60;script&#62;');
  });

  it('the offline report loads nothing and runs nothing; the live page only opens its own /ws', () => {
    const model = buildReportModel({ version: 't', generatedAt: 0, audit: audit([]), samples, input: null });
    const offline = renderReportDocument(model);
    expect(offline).not.toMatch(/<script|<link|<img|<iframe|@import|url\(/i);
    expect(offline).not.toMatch(/(src|href)="(https?:)?\/\//i);
    expect(offline).toContain(`content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"`);
    const live = renderLiveReportPage(model, '<p>sidecar</p>');
    expect(live).toContain("connect-src 'self'");
    expect(live).toContain("'/ws?view=report'");
    expect(live).toContain('<section id="sidecar" class="page"><h2>The sidecar</h2><p>sidecar</p></section>');
  });

  it('a plot without data says so instead of drawing an empty frame', () => {
    const html = renderReportDocument(
      buildReportModel({ version: 't', generatedAt: 0, audit: audit([]), samples: samples.slice(0, 1), input: null }),
    );
    expect(html.match(/data-points="0"/g)).toHaveLength(6);
    expect(html).toContain('No data over this window yet.');
  });

  it('plots carry their points and each series its mean', () => {
    const html = renderReportDocument(
      buildReportModel({ version: 't', generatedAt: 0, audit: audit([]), samples, input: null }),
    );
    expect(html).toMatch(/data-chart="stickiness" data-points="10"/);
    // the sample helper: 100 % sticky, one server (chance 1), realised 90 % vs oracle 95 %
    expect(html).toContain('data-series="stickiness" data-mean="1.000"');
    expect(html).toContain('data-series="ctx0" data-mean="0.9000"');
    expect(html).toContain('data-series="oracle, all servers" data-mean="0.9500"');
  });
});
