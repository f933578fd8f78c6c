import { describe, expect, it } from 'vitest';
import { NO_PREFERENCE, quietDecisions, quietInput, servers } from '../../../../test/helpers/diagnosis-input.js';
import type { DecisionDiagnosis } from '../rule.js';
import { evidenceInsufficient } from './evidence-insufficient.js';
import { sourceUnreachable } from './source-unreachable.js';

describe('an unreachable source', () => {
  // `audit --ctx ctx0=http://unreachable --duration 10s`: the worker's /server_info failed three times in a row
  // (a failed read is retried at the poll interval), there is no traffic at all
  const input = quietInput({
    now: 10_000,
    servers: servers({ requests: 0, outcomes: 0, joinedOutcomes: 0, events: 0, eventsTotal: 0, routerPolls: 0 }),
    // no decision at all: every count 0
    decisions: {
      ...(Object.fromEntries(
        Object.entries(quietDecisions()).map(([k, v]) => [k, typeof v === 'number' ? 0 : v]),
      ) as unknown as DecisionDiagnosis),
      serverCount: 1,
      preference: NO_PREFERENCE,
    },
    sources: [
      {
        source: 'server-info:ctx0',
        up: false,
        error: 'http://127.0.0.1:1/server_info: ECONNREFUSED',
        downSince: 100,
        lastFailure: 2_100,
        failures: 3,
      },
    ],
  });

  it('is a source-unreachable finding before the grace period when three reads in a row failed', () => {
    expect(sourceUnreachable.evaluate(input)?.summary).toBe(
      'cannot read server-info:ctx0: http://127.0.0.1:1/server_info: ECONNREFUSED',
    );
  });

  it('is what evidence-insufficient names first, not "send traffic"', () => {
    const hit = evidenceInsufficient.evaluate(input);
    expect(hit?.summary).toMatch(
      /^cannot tell whether routing follows the prefix cache: server-info:ctx0 cannot be read/,
    );
    expect(hit?.fix).toMatch(/^make server-info:ctx0 reachable from the sidecar \(see source-unreachable\)/);
  });
});
