// The Prometheus text exposition (format 0.0.4) of one family read from a snapshot, written directly. prom-client's
// collect() path (reset, a hashed and validated label set per sample, then formatting every sample again) was most
// of a scrape's time at a fleet's size (BENCHMARKS §6, §9). The text is the one prom-client 15 writes for the same
// samples (exposition-text.test.ts checks it against prom-client): `\` and newline escaped in help and label
// values, `"` too in label values; a repeated label set keeps its first place, a counter's values add up and a
// gauge takes the last; a family without labels always has its one sample, 0 until read.
import type { Labels, Sample } from './exporter-metrics.js';
import type { MetricSpec } from './metric-catalog.js';

const NEEDS_ESCAPE = /[\\\n"]/;

function escapedHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function escapedLabelValue(value: string): string {
  return NEEDS_ESCAPE.test(value) ? escapedHelp(value).replace(/"/g, '\\"') : value;
}

function valueText(value: number): string {
  if (Number.isNaN(value)) return 'Nan';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return `${value}`;
}

function labelsText(labels: Labels): string {
  let text = '';
  for (const name in labels) text += `${text === '' ? '{' : ','}${name}="${escapedLabelValue(labels[name]!)}"`;
  return text === '' ? '' : `${text}}`;
}

/** One family's HELP, TYPE and sample lines, without a trailing newline. */
export function familyText(metric: MetricSpec, kind: 'counter' | 'gauge', samples: readonly Sample[]): string {
  if (metric.labels.length === 0 && samples.length === 0) samples = [[{}, 0]];
  // a sample's label text is its identity (escaped, so two label sets never write the same text); a Map keeps the
  // first place of a repeated one
  const valueOf = new Map<string, number>();
  for (const [labels, value] of samples) {
    const series = labelsText(labels);
    const prior = valueOf.get(series);
    valueOf.set(series, prior !== undefined && kind === 'counter' ? prior + value : value);
  }
  let text = `# HELP ${metric.name} ${escapedHelp(metric.help)}\n# TYPE ${metric.name} ${kind}`;
  for (const [series, value] of valueOf) text += `\n${metric.name}${series} ${valueText(value)}`;
  return text;
}
