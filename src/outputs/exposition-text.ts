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

/** A sample's identity within its family: its labels' names and values, in the order its reader names them. */
function labelsKey(labels: Labels): string {
  let key = '';
  for (const name in labels) key += `${name}\u0000${labels[name]!}\u0001`;
  return key;
}

/** One family's HELP, TYPE and sample lines, without a trailing newline. */
export function familyText(metric: MetricSpec, kind: 'counter' | 'gauge', samples: readonly Sample[]): string {
  if (metric.labels.length === 0 && samples.length === 0) samples = [[{}, 0]];
  const series: string[] = [];
  const values: number[] = [];
  const indexOf = new Map<string, number>();
  for (const [labels, value] of samples) {
    const key = labelsKey(labels);
    const at = indexOf.get(key);
    if (at === undefined) {
      indexOf.set(key, series.push(`${metric.name}${labelsText(labels)} `) - 1);
      values.push(value);
    } else values[at] = kind === 'counter' ? values[at]! + value : value;
  }
  let text = `# HELP ${metric.name} ${escapedHelp(metric.help)}\n# TYPE ${metric.name} ${kind}`;
  for (let i = 0; i < series.length; i++) text += `\n${series[i]!}${valueText(values[i]!)}`;
  return text;
}
