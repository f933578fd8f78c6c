// The exposition written directly is the one prom-client writes for the same samples: the exporter switched from
// prom-client's collect() to familyText without changing a byte of /metrics.
import fc from 'fast-check';
import { Counter, Gauge, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { Labels, Sample } from './exporter-metrics.js';
import { familyText } from './exposition-text.js';
import type { MetricSpec } from './metric-catalog.js';

async function promClientText(metric: MetricSpec, kind: 'counter' | 'gauge', samples: readonly Sample[]) {
  const registry = new Registry();
  const config = { name: metric.name, help: metric.help, labelNames: metric.labels, registers: [registry] };
  if (kind === 'counter') {
    const c = new Counter(config);
    c.reset();
    for (const [labels, value] of samples) c.inc(labels, value);
  } else {
    const g = new Gauge(config);
    g.reset();
    for (const [labels, value] of samples) g.set(labels, value);
  }
  return registry.getSingleMetricAsString(metric.name);
}

const LABELS = ['server', 'rank', 'reason'] as const;
// label values and help with everything the format escapes, and text that only looks like it
const text = fc.stringMatching(/^[a-z0-9"\\\n{}=, ]{1,8}$/); // prom-client requires a help text
const labelsOf = (names: readonly string[]): fc.Arbitrary<Labels> =>
  fc
    .tuple(...names.map(() => fc.constantFrom('ctx0', 'ctx1', 'c"1', 'a\\b', 'x\ny', '')))
    .map((values) => Object.fromEntries(names.map((name, i) => [name, values[i]!])));
const gaugeValue = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(NaN, Infinity, -Infinity, 0, -0, 1e21, 1.5e-7, 2 ** 53 + 2),
);
// prom-client refuses an infinite counter (failing the scrape); the exporter's counters are finite
const counterValue = fc.oneof(
  fc.nat(),
  fc.double({ min: 0, noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(1e21, 0.1),
);

describe('familyText', () => {
  it('writes what prom-client writes, for counters and gauges, with repeated label sets and escapes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.subarray([...LABELS]),
        text,
        fc.boolean(),
        fc.infiniteStream(fc.tuple(fc.nat(), counterValue, gaugeValue)),
        fc.nat({ max: 12 }),
        async (names, help, isCounter, draws, count) => {
          const metric: MetricSpec = { name: 'kvsentinel_x_total', type: 'counter', help, labels: names };
          const pool = fc.sample(labelsOf(names), { numRuns: 4, seed: count });
          const samples: Sample[] = [...draws.take(count)].map(([pick, c, g]) => [
            pool[pick % pool.length]!,
            isCounter ? c : g,
          ]);
          const kind = isCounter ? 'counter' : 'gauge';
          expect(familyText(metric, kind, samples)).toBe(await promClientText(metric, kind, samples));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('gives a family without labels its one sample, 0 until read, and one series per label set, a counter summed', () => {
    const spec: MetricSpec = { name: 'kvsentinel_y', type: 'gauge', help: 'a\\b\nc', labels: [] };
    expect(familyText(spec, 'gauge', [])).toBe(
      '# HELP kvsentinel_y a\\\\b\\nc\n# TYPE kvsentinel_y gauge\nkvsentinel_y 0',
    );
    const perServer: MetricSpec = { name: 'kvsentinel_z', type: 'counter', help: 'h', labels: ['server'] };
    expect(
      familyText(perServer, 'counter', [
        [{ server: 'b' }, 1],
        [{ server: 'a"' }, 2],
        [{ server: 'b' }, 3],
      ]),
    ).toBe(
      '# HELP kvsentinel_z h\n# TYPE kvsentinel_z counter\nkvsentinel_z{server="b"} 4\nkvsentinel_z{server="a\\""} 2',
    );
    expect(familyText(perServer, 'counter', [])).toBe('# HELP kvsentinel_z h\n# TYPE kvsentinel_z counter');
  });
});
