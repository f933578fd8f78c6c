// The lint helpers must be able to fail: these pin what they see in an expression.
import { describe, expect, it } from 'vitest';
import { classifyMetricName, parsePromql, selectorsOf, substituteGrafanaVariables } from '../helpers/promql.js';

describe('substituteGrafanaVariables', () => {
  it('replaces range variables with 5m and other variables outside quotes with a literal', () => {
    expect(substituteGrafanaVariables('rate(x{job=~"$job"}[$__rate_interval])')).toBe('rate(x{job=~"$job"}[5m])');
    expect(substituteGrafanaVariables('topk($n, y[${__range}])')).toBe('topk(1, y[5m])');
    expect(substituteGrafanaVariables(`x{a="\\"$q"} + $k`)).toBe(`x{a="\\"$q"} + 1`);
    expect(substituteGrafanaVariables("x{a='$v'}")).toBe("x{a='$v'}");
  });
});

describe('parsePromql', () => {
  it('throws on a syntax error, naming the expression', () => {
    expect(() => parsePromql('rate(x[5m]')).toThrow(/does not parse.*rate\(x\[5m\]/);
    expect(() => parsePromql('sum by (job (x)')).toThrow(/does not parse/);
    expect(() => parsePromql('rate(x[$__rate_interval])')).toThrow(/does not parse/);
  });
});

describe('selectorsOf', () => {
  it('finds names, matchers and the range function of every selector', () => {
    const s = selectorsOf(
      'sum by (le) (rate(a_bucket{job=~"$job", instance="i"}[5m])) / on() b + {__name__="c", x!="y"}',
    );
    expect(s.map((x) => x.name)).toEqual(['a_bucket', 'b', 'c']);
    expect(s[0]?.matchers).toEqual([
      { label: 'job', op: '=~', value: '$job' },
      { label: 'instance', op: '=', value: 'i' },
    ]);
    expect(s[0]?.rangeFunction).toBe('rate');
    expect(s[1]?.rangeFunction).toBeNull();
    expect(s[2]?.matchers).toContainEqual({ label: 'x', op: '!=', value: 'y' });
    expect(selectorsOf('{job="x"}')[0]?.name).toBeNull();
    expect(selectorsOf('max_over_time(g[5m])')[0]?.rangeFunction).toBe('max_over_time');
  });
});

describe('classifyMetricName', () => {
  it('knows the catalog, histogram parts, recording rules and built-ins, and nothing else', () => {
    const rec = new Set(['instance:foo:rate5m']);
    expect(classifyMetricName('kvsentinel_requests_total', rec)).toBe('counter');
    expect(classifyMetricName('kvsentinel_verdict', rec)).toBe('gauge');
    expect(classifyMetricName('kvsentinel_relay_request_duration_seconds_bucket', rec)).toBe('histogram-part');
    expect(classifyMetricName('kvsentinel_relay_request_duration_seconds', rec)).toBeNull();
    expect(classifyMetricName('instance:foo:rate5m', rec)).toBe('recorded');
    expect(classifyMetricName('up', rec)).toBe('builtin');
    expect(classifyMetricName('nodejs_heap_size_used_bytes', rec)).toBe('builtin');
    expect(classifyMetricName('kvsentinel_requests', rec)).toBeNull();
    expect(classifyMetricName('trtllm_kv_cache_hit_rate', rec)).toBeNull();
  });
});
