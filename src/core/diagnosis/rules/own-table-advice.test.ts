// Advice in the deployment's own words: a vLLM/SGLang deployment gets no TensorRT-LLM router_args and no
// /kv_cache_events; the newest router is never told to turn on backfill_block_hashes_on_finish (it ignores it).
import { describe, expect, it } from 'vitest';
import { EVENTS_OFF, quietDecisions, quietInput, servers } from '../../../../test/helpers/diagnosis-input.js';
import { runRules } from '../run-rules.js';
import { RULES } from './index.js';
import { ownTableSetting } from './own-table-advice.js';

// events off on every worker, routing blind to the cache: the findings whose cure is the event path fire
const blind = { ...EVENTS_OFF, routerPolls: 0, routerPollsTotal: 0, eventsDeliveredToRouter: 0, cachedTokens: 200_000 };

describe('advice fits the engine and the router version', () => {
  it('vLLM streams: neither router_args nor /kv_cache_events in any cause or fix', () => {
    const input = quietInput({
      router: { ...quietInput().router, readsEvents: 'stream', readsEventsFrom: 'the event path' },
      routerPollsExpected: false,
      servers: servers({ ...blind, streamed: true, streamEngine: 'vllm', drains: 0, emptyDrains: 0 }),
      decisions: { ...quietDecisions(), sticky: 60, oracleBest: 40, notOracleBest: 160 },
    });
    expect(ownTableSetting(input)).toBeNull();
    const run = runRules(RULES, input);
    expect([...run.hits.keys()]).toEqual(expect.arrayContaining(['events-absent', 'event-signal-masked']));
    for (const [id, hit] of run.hits) {
      expect(hit.fix, id).not.toContain('router_args');
      expect(`${hit.summary} ${hit.fix}`, id).not.toContain('/kv_cache_events');
    }
  });

  it('the newest router (tracking on) gets no backfill advice; the 2026-06 router does', () => {
    const newest = quietInput({
      router: { ...quietInput().router, profile: 'newest', trackRoutedBlocks: true, fillsOwnTable: true },
    });
    expect(ownTableSetting(newest)).toBeNull();
    expect(ownTableSetting(quietInput())).toBe('router_args.backfill_block_hashes_on_finish: true');
    const off = quietInput({ router: { ...newest.router, trackRoutedBlocks: false } });
    expect(ownTableSetting(off)).toContain('track_routed_blocks: true');
  });
});
