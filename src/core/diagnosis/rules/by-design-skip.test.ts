// The newest router's polling skip on a tokens_per_block mismatch is by design (router.py _prepare_server logs it at
// WARNING and relies on routed-block tracking): the cause is the block-size mismatch and the fix is aligning (or
// unsetting) tokens_per_block — no critical, no router-not-polling, no backfill advice the newest router ignores.
import { describe, expect, it } from 'vitest';
import { quietInput, servers } from '../../../../test/helpers/diagnosis-input.js';
import { runRules } from '../run-rules.js';
import { RULES } from './index.js';

const SKIPPED = { routerTokensPerBlock: 32, workerTokensPerBlock: 128, divisible: true };

function newestSkipping(divisible: boolean) {
  return quietInput({
    router: {
      ...quietInput().router,
      blockSize: { tokens: 32, basis: 'logged', from: 'orchestrator-log' },
      profile: 'newest',
      profileFrom: 'orchestrator-log',
      trackRoutedBlocks: true,
      fillsOwnTable: true,
    },
    seesRouterPolls: true,
    servers: servers({ routerPolls: 0, routerPollsTotal: 0, pollingSkipped: { ...SKIPPED, divisible } }),
  });
}

describe('polling skipped by design', () => {
  it('is the block-size mismatch at warning, with the fix of aligning tokens_per_block; router-not-polling stays quiet', () => {
    const run = runRules(RULES, newestSkipping(true));
    expect(run.hits.has('router-not-polling')).toBe(false);
    const tpb = run.hits.get('tokens-per-block-mismatch')!;
    expect(tpb.severity).toBe('warning');
    expect(tpb.summary).toContain('skips their event polling by design');
    expect(tpb.fix).toContain('leave router_args.tokens_per_block unset');
    for (const hit of run.hits.values()) expect(hit.fix).not.toContain('backfill_block_hashes_on_finish');
  });

  it('sizes that do not divide leave servers unprepared: still critical', () => {
    const tpb = runRules(RULES, newestSkipping(false)).hits.get('tokens-per-block-mismatch')!;
    expect(tpb.severity).toBeUndefined();
    expect(tpb.cause).toContain('never prepares those servers');
  });
});
