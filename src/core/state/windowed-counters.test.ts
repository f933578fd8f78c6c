import { describe, expect, it } from 'vitest';
import { LruMap } from './lru-map.js';
import { WindowedCounters } from './windowed-counters.js';

describe('WindowedCounters', () => {
  it('sums only the buckets inside the window', () => {
    const w = new WindowedCounters({ windowMs: 10_000, buckets: 10 });
    w.add(0, 'a', 1);
    w.add(5_000, 'a', 2);
    w.add(9_999, 'a', 4);
    expect(w.sum('a', 9_999)).toBe(7);
    expect(w.sum('a', 15_500)).toBe(6);
    expect(w.sum('a', 30_000)).toBe(0);
    w.add(30_000, 'a', 1);
    expect(w.sum('a', 30_000)).toBe(1);
  });

  it('keeps maxima per window and a null window forever', () => {
    const w = new WindowedCounters({ windowMs: null });
    w.max(0, 'peak', 5);
    w.max(1e9, 'peak', 3);
    w.add(0, 'x');
    expect(w.maxOf('peak', 2e9)).toBe(5);
    expect(w.sum('x', 2e9)).toBe(1);
    expect(w.span(2e9)).toEqual({ from: 0, to: 1e9 });
  });
});

describe('LruMap', () => {
  it('evicts the least recently used and counts it', () => {
    const m = new LruMap<string, number>(2);
    m.set('a', 1);
    m.set('b', 2);
    m.get('a');
    expect(m.set('c', 3)).toEqual(['b', 2]);
    expect(m.dropped).toBe(1);
    expect([...m.values()]).toEqual([1, 3]);
  });
});
