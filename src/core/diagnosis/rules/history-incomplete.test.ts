// A ZMQ stream joined after more than its replay buffer held: the verdict is qualified (evidence-insufficient names
// each server and rank with since when its history is incomplete) even where routing follows the prefixes it can
// see, until the table has turned over.
import { describe, expect, it } from 'vitest';
import { firing, quietInput, quietServer } from '../../../../test/helpers/diagnosis-input.js';
import { evidenceInsufficient } from './evidence-insufficient.js';
import type { Finding } from '../finding.js';
import { verdictOf } from '../verdict.js';

const since = Date.UTC(2026, 11, 2, 7, 0, 0);
const joinedLate = quietInput({
  servers: [
    quietServer('ctx0', { historyIncomplete: [{ rank: 1, since, missingBatches: 20, removedSince: 3 }] }),
    quietServer('ctx1'),
  ],
});

describe('incomplete stream history', () => {
  it('qualifies an otherwise healthy window, naming the server, rank and time', () => {
    expect(firing(quietInput())).not.toContain('evidence-insufficient');
    expect(firing(joinedLate)).toContain('evidence-insufficient');
    const hit = evidenceInsufficient.evaluate(joinedLate)!;
    expect(hit.summary).toContain('ctx0 rank 1: KV history incomplete since 2026-12-02T07:00:00.000Z');
    expect(hit.summary).toContain('20 batches');
    expect(hit.evidence['history_incomplete_since']).toBe('ctx0/rank1:2026-12-02T07:00:00.000Z');
    // a stated capacity: the fix says how many removals turn the table over
    expect(hit.fix).toContain('removed 32768 blocks since (removed 3)');
    // routing follows the prefixes the table shows: the history alone withholds the all-clear
    expect(hit.evidence['history_only']).toBe(true);
  });

  it('withholds the all-clear only: a warning elsewhere still makes the verdict degraded', () => {
    const finding = (
      id: Finding['id'],
      severity: Finding['severity'],
      evidence: Finding['evidence'] = {},
    ): Finding => ({
      id,
      severity,
      servers: [],
      summary: '',
      evidence,
      cause: '',
      fix: '',
      since: 0,
    });
    const history = finding('evidence-insufficient', 'info', { history_only: true });
    expect(verdictOf([history], new Set())).toBe('unknown');
    expect(verdictOf([history, finding('hash-mismatch', 'critical')], new Set())).toBe('degraded');
    // missing evidence of routing itself keeps the verdict unknown whatever else holds
    expect(verdictOf([finding('evidence-insufficient', 'info'), finding('hash-mismatch', 'critical')], new Set())).toBe(
      'unknown',
    );
    expect(verdictOf([], new Set())).toBe('healthy');
  });

  it('without a stated capacity, says how to state one', () => {
    const input = quietInput({
      servers: [
        quietServer('ctx0', {
          kvCapacity: { blocks: 900, from: 'observed peak residency' },
          historyIncomplete: [{ rank: 0, since, missingBatches: 5, removedSince: 0 }],
        }),
      ],
    });
    expect(evidenceInsufficient.evaluate(input)!.fix).toContain("state ctx0's kv_capacity_blocks");
  });
});
