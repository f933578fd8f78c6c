// design.md §1, rows 1–3: kv_cache_aware with the seed preset's events off, then router tokens_per_block 128,
// then backfill. Bands ±2 points, same order (rows 4–5 and the healthy prediction: calibration-sticky).
import { describe, expect, it } from 'vitest';
import type { SimResult } from '../../src/sim/run-virtual.js';
import { BAND_POINTS, pct, runRow, target } from './calibration-helpers.js';

const results = new Map<string, SimResult>();
const TIMEOUT = 240_000;

describe('seed preset: events off', () => {
  it(
    'kv_cache_aware defaults: 89.6% hit, 8.6% scatter',
    () => void results.set('defaults', runRow('defaults')),
    TIMEOUT,
  );
  it(
    'router tokens_per_block 128: 89.8% hit, 8.6% scatter',
    () => void results.set('tpb128', runRow('tpb128')),
    TIMEOUT,
  );
  it('+ backfill_block_hashes_on_finish: 92.8% hit', () => void results.set('backfill', runRow('backfill')), TIMEOUT);

  it('keeps the order of the table', () => {
    const hit = (id: string): number => results.get(id)!.cache_hit_ratio;
    // with events off the block table is empty, so tokens_per_block cannot change a single decision
    const [a, b] = [results.get('defaults')!, results.get('tpb128')!];
    expect([b.cached_tokens, b.scattered_turns, b.moved_turn_ratio]).toEqual([
      a.cached_tokens,
      a.scattered_turns,
      a.moved_turn_ratio,
    ]);
    expect(hit('backfill')).toBeGreaterThan(hit('tpb128'));
    // the next rows (backfill + max_batch_size 512, conversation) must lie above this band and its scatter below row 1's
    expect(pct(hit('backfill'))).toBeLessThanOrEqual(target('backfill').hit! + BAND_POINTS);
    expect(pct(results.get('defaults')!.turn_scatter_ratio)).toBeGreaterThanOrEqual(
      target('defaults').scatter! - BAND_POINTS,
    );
  });
});
