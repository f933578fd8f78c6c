// The HTML audit report: one self-contained page (inline style, inline SVG plots, no script unless live, no fonts,
// no network) with the verdict, every finding with its evidence, cause and fix, the plots over the window, the
// per-server table and the configuration kvsentinel inferred. Findings render from their data alone, so a new rule
// appears without a change here. Live (`/` of serve and demo) the same body is swapped in from /ws frames.
import { verdictMeaning } from '../../core/report/audit-report.js';
import type { ChartData } from '../../core/report/report-charts.js';
import type { ConfigurationFact } from '../../core/report/inferred-configuration.js';
import type { ReportModel } from '../../core/report/report-model.js';
import { evidenceLabel, evidenceValueText } from '../evidence-text.js';
import { formatDateTime, formatElapsed, formatElapsedShort, formatHeldSince } from '../time-text.js';
import { escapeHtml as esc } from './html-escape.js';
import { REPORT_CSS } from './report-style.js';
import { plottedValues, renderChartSvg, renderLegend } from './svg-chart.js';
import type { Finding } from '../../core/diagnosis/finding.js';

function pct(value: number | null): string {
  return value === null ? 'n/a' : `${(value * 100).toFixed(1)}%`;
}

function int(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** the end of the window the finding was judged over (its evidence carries it), null when it does not say */
function windowEnd(f: Finding): number | null {
  const to = f.evidence['window_to_ms'];
  return typeof to === 'number' ? to : null;
}

function renderFinding(f: Finding, renderedAt: number): string {
  const evidence = Object.entries(f.evidence).filter(([key]) => key !== 'window_from_ms' && key !== 'window_to_ms');
  const items = evidence
    .map(
      ([key, value]) =>
        `<li data-evidence="${esc(key)}"><span class="dim">${esc(evidenceLabel(key))}</span> <b>${esc(evidenceValueText(key, value))}</b></li>`,
    )
    .join('');
  const servers = f.servers.length > 0 ? ` <span class="dim">[${esc(f.servers.join(', '))}]</span>` : '';
  return `<article class="finding ${esc(f.severity)}" data-finding="${esc(f.id)}">
<h3><span class="sev ${esc(f.severity)}">${esc(f.severity.toUpperCase())}</span>${esc(f.id)}${servers}</h3>
<p>${esc(f.summary)}</p>
<dl><dt>cause</dt><dd>${esc(f.cause)}</dd><dt>fix</dt><dd><code>${esc(f.fix)}</code></dd><dt>since</dt><dd>${esc(formatHeldSince(f.since, windowEnd(f), renderedAt))}</dd></dl>
${items === '' ? '' : `<p class="dim">evidence</p><ul class="evidence">${items}</ul>`}
</article>`;
}

function renderVerdict(model: ReportModel): string {
  const a = model.audit;
  const s = a.stats;
  const cell = (label: string, value: string): string =>
    `<div><span class="dim">${esc(label)}</span><b>${esc(value)}</b></div>`;
  const headline = [
    cell('requests', int(s.requests)),
    cell('cache hit', pct(s.cache_hit_ratio)),
    // a run that started cold (the demo): the hit after its warm-up, and what the warm-up took
    ...(a.steady_state !== undefined
      ? [
          cell('steady-state hit', pct(a.steady_state.cache_hit_ratio)),
          cell(
            'after a warm-up of',
            `${int(a.steady_state.warmup_requests)} requests, ${formatElapsedShort(a.steady_state.warmup_seconds * 1000)}`,
          ),
        ]
      : []),
    cell(s.oracle_basis === 'sticky-ideal' ? 'oracle (sticky ideal)' : 'oracle', pct(s.oracle_hit_ratio)),
    cell('stickiness', pct(s.stickiness)),
    cell('turn scatter', pct(s.turn_scatter_ratio)),
    ...(s.tokens_lost_per_second !== null ? [cell('prompt tokens lost', `${int(s.tokens_lost_per_second)}/s`)] : []),
    ...(s.window_seconds !== null ? [cell('window', formatElapsedShort(s.window_seconds * 1000))] : []),
  ];
  const spans = model.verdicts;
  const total = spans.reduce((n, v) => n + Math.max(0, v.to - v.from), 0);
  const strip =
    total > 0
      ? `<p class="dim">Verdict over the window:</p><div class="strip" role="img" aria-label="verdict over the window">${spans
          .filter((v) => v.to > v.from)
          .map(
            (v) =>
              `<span class="${esc(v.verdict)}" style="width:${((100 * (v.to - v.from)) / total).toFixed(2)}%" title="${esc(`${v.verdict} for ${formatElapsed(v.to - v.from)}`)}"></span>`,
          )
          .join('')}</div>`
      : '';
  const warnings = [
    ...(a.source.malformed > 0 ? [`${int(a.source.malformed)} malformed input lines skipped`] : []),
    ...(a.rule_errors > 0 ? [`${a.rule_errors} rule evaluations failed: some findings may be missing`] : []),
    ...a.notes,
  ];
  return `<section id="verdict">
<div class="verdict ${esc(a.verdict)}" data-verdict="${esc(a.verdict)}"><strong>${esc(a.verdict.toUpperCase())}</strong>${esc(
    verdictMeaning(
      a.verdict,
      a.findings.some((f) => f.severity === 'critical'),
    ),
  )}</div>
<div class="headline">${headline.join('')}</div>
${warnings.map((w) => `<p class="dim">${esc(w)}</p>`).join('')}
${strip}
</section>`;
}

function renderFindings(model: ReportModel): string {
  const findings = model.audit.findings;
  const body =
    findings.length === 0
      ? '<p>No findings: nothing kvsentinel checks for holds over this window.</p>'
      : `${findings.map((f) => renderFinding(f, model.generatedAt)).join('\n')}
<h3>Fixes, in order</h3><ol>${findings.map((f) => `<li><b>${esc(f.id)}</b>: <code>${esc(f.fix)}</code></li>`).join('')}</ol>`;
  return `<section id="findings" class="page"><h2>Findings (${findings.length})</h2>\n${body}\n</section>`;
}

function renderChart(chart: ChartData): string {
  // never an empty frame without a sentence: an empty plot is the sentence, a flat one gets it above the plot
  const empty = plottedValues(chart) === 0;
  const why = chart.note ?? (empty ? 'No data over this window yet.' : null);
  const note = why === null ? '' : `<p class="note" data-chart-note="${esc(chart.id)}">${esc(why)}</p>`;
  const plot = empty
    ? `<p class="nodata" data-chart="${esc(chart.id)}" data-points="0">${esc(why ?? '')}</p>`
    : `${note}${renderChartSvg(chart)}${renderLegend(chart)}`;
  return `<figure id="chart-${esc(chart.id)}"><h3>${esc(chart.title)}</h3>${plot}<figcaption class="caption">${esc(chart.caption)}</figcaption></figure>`;
}

function renderCharts(model: ReportModel): string {
  const step =
    model.sampleIntervalMs !== null
      ? ` Sampled every ${(model.sampleIntervalMs / 1000).toFixed(0)} s, plotted per interval.`
      : '';
  return `<section id="plots" class="page"><h2>Over the window</h2><p class="dim">Counts and ratios per interval from kvsentinel's state.${esc(step)}</p>\n<div class="figures">${model.charts.map(renderChart).join('\n')}</div>\n</section>`;
}

function renderServers(model: ReportModel): string {
  const rows = model.audit.servers.map(
    (r) =>
      `<tr><td>${esc(r.server)}</td><td class="num">${int(r.requests)}</td><td class="num">${pct(r.cache_hit_ratio)}</td><td class="num">${r.prompt_tokens > 0 ? pct(r.oracle_cached_tokens / r.prompt_tokens) : 'n/a'}</td><td class="num">${int(r.predicted_router_cached_tokens)}</td><td class="num">${int(r.router_table_blocks)}</td><td class="num">${int(r.router_polls)}</td><td class="num">${int(r.events)}</td><td class="num">${int(r.event_gaps)}</td><td class="num">${int(r.event_resets)}</td><td class="num">${int(r.hash_mismatches)}</td></tr>`,
  );
  const table =
    rows.length === 0
      ? '<p>No server seen.</p>'
      : `<table id="servers-table"><tr><th>server</th><th>requests</th><th>cache hit</th><th>oracle hit</th><th>router-predicted tokens</th><th>router table blocks</th><th>router polls</th><th>KV events</th><th>gaps</th><th>resets</th><th>hash mismatches</th></tr>${rows.join('')}</table>`;
  return `<section id="servers" class="page"><h2>Servers</h2>${table}</section>`;
}

function factRows(facts: readonly ConfigurationFact[]): string {
  return facts
    .map(
      (f) =>
        `<tr><td>${esc(f.key)}</td><td>${f.value === null ? '<span class="dim">unknown</span>' : `<code>${esc(f.value)}</code>`}</td><td>${esc(f.from)}</td></tr>`,
    )
    .join('');
}

function renderConfiguration(model: ReportModel): string {
  const c = model.configuration;
  const s = model.audit.stats;
  if (c === null)
    return `<section id="configuration"><h2>Configuration kvsentinel inferred</h2><p>router tokens_per_block: ${s.router_tokens_per_block ?? 'unknown'} (${esc(s.router_tokens_per_block_from ?? 'no source')})</p></section>`;
  const workers = c.workers
    .map((w) =>
      w.facts
        .map(
          (f, i) =>
            `<tr>${i === 0 ? `<td rowspan="${w.facts.length}">${esc(w.server)}</td>` : ''}<td>${esc(f.key)}</td><td>${f.value === null ? '<span class="dim">unknown</span>' : `<code>${esc(f.value)}</code>`}</td><td>${esc(f.from)}</td></tr>`,
        )
        .join(''),
    )
    .join('');
  return `<section id="configuration"><h2>Configuration kvsentinel inferred</h2>
<h3>Router</h3><table><tr><th>setting</th><th>value</th><th>how kvsentinel knows</th></tr>${factRows(c.router)}</table>
<h3>Workers</h3>${workers === '' ? '<p>No worker seen.</p>' : `<table><tr><th>server</th><th>setting</th><th>value</th><th>how kvsentinel knows</th></tr>${workers}</table>`}
</section>`;
}

/** The report's content (everything inside <main>): the live page swaps it in on each report frame. */
export function renderReportBody(model: ReportModel, extra = ''): string {
  const a = model.audit;
  const window = a.stats.window_seconds !== null ? `, ${formatElapsed(a.stats.window_seconds * 1000)}` : '';
  return `<header><h1>kvsentinel audit</h1>
<p class="meta">${esc(a.source.description)} · ${int(a.source.observations)} observations${esc(window)} · rendered ${esc(formatDateTime(model.generatedAt))} by kvsentinel ${esc(model.version)}</p></header>
${renderVerdict(model)}
${renderFindings(model)}
${renderCharts(model)}
${renderServers(model)}
${renderConfiguration(model)}
${extra}`;
}

export interface ReportDocumentOptions {
  /** the live page's script (inline); none for the offline report */
  readonly script?: string;
  /** markup after the report's sections (the live page's sidecar status) */
  readonly extra?: string;
  /** markup before <main> (the live page's status bar) */
  readonly banner?: string;
}

export function renderReportDocument(model: ReportModel, options: ReportDocumentOptions = {}): string {
  // no network at view time: nothing here may load (default-src 'none'); the live page may open its own /ws only
  const csp =
    options.script === undefined
      ? "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
      : "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'unsafe-inline'; connect-src 'self'";
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<title>kvsentinel audit: ${esc(model.audit.verdict)}</title>
<style>${REPORT_CSS}</style></head>
<body>${options.banner ?? ''}<main id="report">
${renderReportBody(model, options.extra ?? '')}
</main>${options.script !== undefined ? `<script>${options.script}</script>` : ''}</body></html>
`;
}
