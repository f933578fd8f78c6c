// source-unreachable: a configured source (relay upstream, poller, log, debug endpoint) cannot be read.
import type { Rule } from '../rule.js';

export const sourceUnreachable: Rule = {
  id: 'source-unreachable',
  evaluate(input) {
    // down for the grace period, or three failed reads in a row (sources report every failed read)
    const down = input.sources.filter(
      (s) =>
        !s.up && s.downSince !== null && (input.now - s.downSince >= input.thresholds.sourceDownMs || s.failures >= 3),
    );
    if (down.length === 0) return null;
    const names = down.map((s) => s.source);
    return {
      servers: [],
      summary: `cannot read ${names.join(', ')}: ${down.map((s) => s.error ?? 'no answer').join('; ')}`,
      evidence: {
        sources: names.join(' '),
        down_for_ms: Math.max(...down.map((s) => input.now - (s.downSince ?? input.now))),
        failures: down.reduce((n, s) => n + s.failures, 0),
        errors: down.map((s) => `${s.source}: ${s.error ?? 'no answer'}`).join('; '),
      },
      cause: 'the sidecar cannot see part of the system, so findings about it may be missing',
      fix: `check the address given for ${names.join(', ')} (--relay, --ctx, --router-debug, --requests, --orchestrator-log) and that it is reachable from the sidecar`,
    };
  },
};
