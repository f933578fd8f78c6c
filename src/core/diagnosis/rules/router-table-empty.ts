// router-table-empty: the router's debug endpoint reports empty block tables for servers that serve traffic.
import { withOwnTable } from './own-table-advice.js';
import type { Rule } from '../rule.js';
import { windowEvidence } from './rule-math.js';

export const routerTableEmpty: Rule = {
  id: 'router-table-empty',
  evaluate(input) {
    if (!input.seesRouterDebug || !input.router.consumesEvents) return null;
    const hit = input.servers.filter(
      (s) =>
        s.routerState !== null &&
        s.routerState.blockTableSize === 0 &&
        s.requests >= input.thresholds.minServerRequests,
    );
    if (hit.length === 0) return null;
    const names = hit.map((s) => s.server);
    return {
      servers: names,
      summary: `the router's block table is empty for ${names.join(', ')} although they served ${hit.reduce((n, s) => n + s.requests, 0)} requests`,
      evidence: {
        requests: hit.reduce((n, s) => n + s.requests, 0),
        block_table_size: 0,
        router_polls: hit.map((s) => `${s.server}:${s.routerState?.polls ?? 'unknown'}`).join(' '),
        router_poll_failures: hit.map((s) => `${s.server}:${s.routerState?.pollFailures ?? 'unknown'}`).join(' '),
        ...windowEvidence(input.window),
      },
      cause:
        'docs/trtllm-wire.md §7.1/§7.2/§7.6: the table is filled only from KV events, and none reach it (see the findings naming the cause)',
      fix: withOwnTable(input, 'fix the event path named by the other findings', '; meanwhile '),
    };
  },
};
