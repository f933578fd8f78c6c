// design.md §1, rows 4–5 (backfill + max_batch_size 512, conversation router) and the prediction: healthy
// kv_cache_aware (events on, block sizes aligned) within 2 points of the conversation router.
import { describe, expect, it } from 'vitest';
import type { SimResult } from '../../src/sim/run-virtual.js';
import { BAND_POINTS, pct, runRow, target } from './calibration-helpers.js';

const results = new Map<string, SimResult>();
const TIMEOUT = 240_000;

describe('seed preset: sticky rows and the healthy prediction', () => {
  it(
    '+ backfill + max_batch_size 512: 95.0% hit, 3.2% scatter',
    () => void results.set('backfill-mbs512', runRow('backfill-mbs512')),
    TIMEOUT,
  );
  it('conversation router: ~96% hit', () => void results.set('conversation', runRow('conversation')), TIMEOUT);
  it('healthy kv_cache_aware (prediction)', () => void results.set('healthy', runRow('healthy')), TIMEOUT);

  it('keeps the order of the table', () => {
    const r4 = results.get('backfill-mbs512')!;
    // above the whole band of row 3 (+ backfill, max_batch_size 64) ⇒ above row 3 itself
    expect(pct(r4.cache_hit_ratio)).toBeGreaterThan(target('backfill').hit! + BAND_POINTS);
    // below the whole scatter band of row 1 ⇒ below row 1 itself
    expect(pct(r4.turn_scatter_ratio)).toBeLessThan(target('defaults').scatter! - BAND_POINTS);
    // with max_batch_size 512 the load term almost never overturns a sticky prefix: the row comes out as sticky
    // as the conversation router (table: 95.0 vs ~96), never better
    expect(results.get('conversation')!.cache_hit_ratio).toBeGreaterThanOrEqual(r4.cache_hit_ratio);
  });

  it('healthy kv_cache_aware lands within 2 points of the conversation router', () => {
    const healthy = results.get('healthy')!;
    const gap = Math.abs(pct(healthy.cache_hit_ratio) - pct(results.get('conversation')!.cache_hit_ratio));
    expect(gap).toBeLessThanOrEqual(2);
    expect(healthy.servers.every((s) => (s.routerBlockTableSize ?? 0) > 0 && s.eventsDrained > 0)).toBe(true);
  });
});
