// Every family in the metric catalog, exposed the way the exporter exposes it, passes Prometheus' own metric lint
// (promtool check metrics: naming, units, _total on counters, HELP present).
import { describe, expect, it } from 'vitest';
import { runTool } from '../helpers/prom-tools.js';
import { SEED_LIKE, syntheticExposition } from '../helpers/synthetic-exporter.js';

describe('metric catalog', () => {
  it('passes promtool check metrics', async () => {
    const text = syntheticExposition(SEED_LIKE, 100);
    const r = await runTool('promtool', ['check', 'metrics'], text);
    expect(r.stdout + r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('is linted for real: a bad name is reported', async () => {
    const r = await runTool(
      'promtool',
      ['check', 'metrics'],
      '# HELP kvsentinel_latency_ms x\n# TYPE kvsentinel_latency_ms gauge\nkvsentinel_latency_ms 1\n',
    );
    expect(r.stdout + r.stderr).toContain('kvsentinel_latency_ms');
    expect(r.code).toBe(3);
  });
});
