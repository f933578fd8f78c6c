// One chart of the report as inline SVG, drawn on the server: lines (gaps where a value is unknown) or stacked bars
// per interval, markers for event gaps and resets, axes with time since the window's start. No script and no
// library: the report opens anywhere, prints as vectors and carries its data in the markup (see docs/report.md).
import { TOTAL_GROUP, type ChartData, type ChartSeries } from '../../core/report/report-charts.js';
import { formatElapsedShort } from '../time-text.js';
import { escapeHtml } from './html-escape.js';

/** Okabe–Ito: distinguishable with the common colour-vision deficiencies, and in greyscale print by dash */
export const PALETTE = [
  '#0072B2',
  '#E69F00',
  '#009E73',
  '#D55E00',
  '#CC79A7',
  '#56B4E9',
  '#F0E442',
  '#999999',
] as const;

/** the SVG dash pattern of ChartSeries.dash 0..3 */
const DASHES = ['', '6 4', '1.5 4', '8 3 1.5 3'] as const;
const DASH_CLASSES = ['', ' dashed', ' dotted', ' dashdot'] as const;

const W = 720;
const H = 230;
const PAD = { left: 56, right: 78, top: 10, bottom: 34 };
/** the least vertical room between two end-of-line labels, px */
const LABEL_GAP = 13;

export function colorOf(group: number): string {
  if (group === TOTAL_GROUP) return '#24292f';
  return PALETTE[((group % PALETTE.length) + PALETTE.length) % PALETTE.length]!;
}

function niceStep(span: number, ticks: number): number {
  const raw = span / Math.max(1, ticks);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const norm = raw / mag;
  return (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
}

function formatValue(v: number, unit: ChartData['unit']): string {
  if (unit === 'ratio') return `${Math.round(v * 100)}%`;
  if (Math.abs(v) >= 1_000_000) return `${(v / 1_000_000).toFixed(Math.abs(v) >= 10_000_000 ? 0 : 1)}M`;
  if (Math.abs(v) >= 10_000) return `${(v / 1000).toFixed(0)}k`;
  if (Math.abs(v) >= 1_000) return `${(v / 1000).toFixed(1)}k`;
  return Number.isInteger(v) ? String(v) : v.toFixed(2);
}

function points(series: ChartSeries): { t: number; v: number }[] {
  return series.points.filter((p): p is { t: number; v: number } => p.v !== null && Number.isFinite(p.v));
}

/** The mean of a series' known values (null when it has none). */
export function meanOf(series: ChartSeries): number | null {
  const known = points(series);
  return known.length === 0 ? null : known.reduce((a, p) => a + p.v, 0) / known.length;
}

/** The number of plotted values (the browser test reads it from data-points). */
export function plottedValues(chart: ChartData): number {
  return chart.series.reduce((n, s) => n + points(s).length, 0);
}

export function renderChartSvg(chart: ChartData): string {
  const all = chart.series.flatMap((s) => s.points);
  const ts = all.map((p) => p.t);
  const tMin = ts.length > 0 ? Math.min(...ts) : 0;
  const tMax = ts.length > 0 ? Math.max(...ts) : 1;
  // an interval ends at its point: the first one starts one step earlier
  const step =
    chart.series[0] !== undefined && chart.series[0].points.length > 1
      ? chart.series[0].points[1]!.t - chart.series[0].points[0]!.t
      : 1000;
  const t0 = tMin - step;
  const tSpan = Math.max(1, tMax - t0);
  let yMax: number;
  if (chart.kind === 'stacked') {
    const n = chart.series[0]?.points.length ?? 0;
    yMax = Math.max(
      1,
      ...Array.from({ length: n }, (_, i) => chart.series.reduce((a, s) => a + (s.points[i]?.v ?? 0), 0)),
    );
  } else {
    // ratios and score terms on their natural 0..1 scale (at least); counts and rates on at least 0..1
    yMax = Math.max(1, ...chart.series.flatMap((s) => points(s).map((p) => p.v)));
  }
  const yStep = chart.unit === 'ratio' && yMax <= 1 ? 0.25 : niceStep(yMax, 4);
  yMax = Math.max(yStep, Math.ceil(yMax / yStep - 1e-9) * yStep);
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const x = (t: number): number => PAD.left + ((t - t0) / tSpan) * plotW;
  const y = (v: number): number => PAD.top + plotH - (v / yMax) * plotH;
  const f = (n: number): string => n.toFixed(1);
  const parts: string[] = [];
  // grid and axes
  for (let v = 0; v <= yMax + 1e-9; v += yStep) {
    parts.push(`<line class="grid" x1="${PAD.left}" x2="${W - PAD.right}" y1="${f(y(v))}" y2="${f(y(v))}"/>`);
    parts.push(
      `<text class="tick" x="${PAD.left - 6}" y="${f(y(v) + 4)}" text-anchor="end">${escapeHtml(formatValue(v, chart.unit))}</text>`,
    );
  }
  const xStep = niceStep(tSpan / 1000, 6);
  for (let s = 0; s <= tSpan / 1000 + 1e-9; s += xStep) {
    const px = x(t0 + s * 1000);
    parts.push(`<line class="axis" x1="${f(px)}" x2="${f(px)}" y1="${PAD.top + plotH}" y2="${PAD.top + plotH + 4}"/>`);
    parts.push(
      `<text class="tick" x="${f(px)}" y="${PAD.top + plotH + 16}" text-anchor="middle">${escapeHtml(formatElapsedShort(s * 1000))}</text>`,
    );
  }
  parts.push(
    `<line class="axis" x1="${PAD.left}" x2="${W - PAD.right}" y1="${PAD.top + plotH}" y2="${PAD.top + plotH}"/>`,
  );
  parts.push(
    `<text class="tick" x="${W - PAD.right}" y="${H - 4}" text-anchor="end">time since the window's start</text>`,
  );
  // markers under the data
  for (const m of chart.markers) {
    const px = f(x(m.t));
    parts.push(
      `<line class="marker ${m.kind}" x1="${px}" x2="${px}" y1="${PAD.top}" y2="${PAD.top + plotH}"><title>${escapeHtml(m.label)}</title></line>`,
    );
  }
  if (chart.kind === 'stacked') {
    const n = chart.series[0]?.points.length ?? 0;
    const barW = Math.max(1, (plotW / Math.max(1, n)) * 0.8);
    for (let i = 0; i < n; i++) {
      let base = 0;
      const t = chart.series[0]!.points[i]!.t;
      for (const s of chart.series) {
        const v = s.points[i]?.v ?? 0;
        if (v <= 0) continue;
        const left = x(t) - barW;
        parts.push(
          `<rect data-series="${escapeHtml(s.label)}" x="${f(left + barW * 0.1)}" y="${f(y(base + v))}" width="${f(barW)}" height="${f(y(base) - y(base + v))}" fill="${colorOf(s.group)}"><title>${escapeHtml(`${s.label}: ${v}`)}</title></rect>`,
        );
        base += v;
      }
    }
  } else {
    for (const s of chart.series) {
      // a path broken wherever the value is unknown
      let d = '';
      let pen = false;
      for (const p of s.points) {
        if (p.v === null || !Number.isFinite(p.v)) {
          pen = false;
          continue;
        }
        d += `${pen ? 'L' : 'M'}${f(x(p.t))} ${f(y(p.v))}`;
        pen = true;
      }
      const single = points(s).length === 1 ? points(s)[0]! : null;
      const dash =
        DASHES[s.dash % DASHES.length] === '' ? '' : ` stroke-dasharray="${DASHES[s.dash % DASHES.length]!}"`;
      // the series' mean rides along as data (readers and the browser test check the story without parsing paths)
      const mean = meanOf(s);
      parts.push(
        `<path class="series${s.group === TOTAL_GROUP ? ' total' : ''}" d="${d}" stroke="${colorOf(s.group)}"${dash} data-series="${escapeHtml(s.label)}" data-mean="${mean === null ? '' : mean.toPrecision(4)}"><title>${escapeHtml(s.label)}${mean === null ? '' : `: mean ${escapeHtml(formatValue(mean, chart.unit))}`}</title></path>`,
      );
      if (single !== null)
        parts.push(`<circle cx="${f(x(single.t))}" cy="${f(y(single.v))}" r="3" fill="${colorOf(s.group)}"/>`);
    }
  }
  if (chart.kind === 'line') parts.push(...endLabels(chart, x, y));
  const label = `${chart.title}: ${chart.series.map((s) => s.label).join(', ')}`;
  return `<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="${escapeHtml(label)}" data-chart="${escapeHtml(chart.id)}" data-points="${plottedValues(chart)}" xmlns="http://www.w3.org/2000/svg">${parts.join('')}</svg>`;
}

/** Each short-named line (a server) named at its last known point, right of the plot, nudged apart. */
function endLabels(chart: ChartData, x: (t: number) => number, y: (v: number) => number): string[] {
  const ends = chart.series
    .map((s) => ({ s, last: points(s).at(-1) }))
    // short names only (server ids): the legend names the rest
    .filter(
      (e): e is { s: ChartSeries; last: { t: number; v: number } } => e.last !== undefined && e.s.label.length <= 12,
    )
    .map((e) => ({ s: e.s, x: x(e.last.t), y: y(e.last.v) }))
    .sort((a, b) => a.y - b.y);
  for (let i = 1; i < ends.length; i++) ends[i]!.y = Math.max(ends[i]!.y, ends[i - 1]!.y + LABEL_GAP);
  const overflow = (ends.at(-1)?.y ?? 0) - (H - PAD.bottom);
  if (overflow > 0) for (const e of ends) e.y -= overflow;
  return ends.map(
    (e) =>
      `<text class="label" x="${(W - PAD.right + 6).toFixed(1)}" y="${(e.y + 4).toFixed(1)}" fill="${colorOf(e.s.group)}">${escapeHtml(e.s.label)}</text>`,
  );
}

export function renderLegend(chart: ChartData): string {
  const items = chart.series.map((s) => {
    const swatch =
      chart.kind === 'stacked'
        ? `<span class="swatch box" style="background:${colorOf(s.group)}"></span>`
        : `<span class="swatch${DASH_CLASSES[s.dash % DASH_CLASSES.length]!}" style="border-color:${colorOf(s.group)}"></span>`;
    return `<li>${swatch}${escapeHtml(s.label)}</li>`;
  });
  if (chart.markers.some((m) => m.kind === 'gap'))
    items.push('<li><span class="swatch marker-gap"></span>event_id gap</li>');
  if (chart.markers.some((m) => m.kind === 'reset'))
    items.push('<li><span class="swatch marker-reset"></span>stream reset</li>');
  return `<ul class="legend">${items.join('')}</ul>`;
}
