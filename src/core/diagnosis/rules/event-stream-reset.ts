// event-stream-reset: a rank's event_id (pull path) or batch seq (ZMQ stream) went back — the worker restarted; its
// reconstructed table was reset.
import type { Rule } from '../rule.js';
import { windowEvidence } from './rule-math.js';

export const eventStreamReset: Rule = {
  id: 'event-stream-reset',
  evaluate(input) {
    if (!input.seesWorkerEvents) return null;
    const hit = input.servers.filter((s) => s.resets > 0);
    if (hit.length === 0) return null;
    const names = hit.map((s) => s.server);
    const resets = hit.reduce((n, s) => n + s.resets, 0);
    const counters = [
      hit.some((s) => !s.streamed) ? 'event_id' : null,
      hit.some((s) => s.streamed) ? 'the ZMQ stream seq' : null,
    ]
      .filter((c) => c !== null)
      .join(' / ');
    return {
      servers: names,
      summary: `${counters} restarted ${resets} time(s) on ${names.join(', ')} (worker restart); tables were rebuilt`,
      evidence: {
        resets,
        by_rank: hit
          .flatMap((s) => s.ranks.filter((r) => r.resets > 0).map((r) => `${s.server}/rank${r.rank}:${r.resets}`))
          .join(' '),
        ...windowEvidence(input.window),
      },
      cause:
        "a CTX worker restarted: event_id (docs/trtllm-wire.md §2.1) and the ZMQ publisher's seq count from 0 per life; its cache started empty",
      fix:
        'no configuration change; if the restart was unexpected, read the worker log of ' +
        names.join(', ') +
        ' (OOM, crash)',
    };
  },
};
