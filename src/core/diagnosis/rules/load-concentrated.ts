// load-concentrated: one server takes most of the requests while the others sit idle — the mark of a cache-aware
// router whose load term is too small against its cache term (a shared prefix pulls every request to the server that
// cached it first). The hit rate is fine; the cost is queueing on one server. Never evidence of an inert router
// (a load-only router spreads load); cache-signal-inert is decided from behaviour, which this shape passes.
import type { Rule } from '../rule.js';
import { percent, round3, windowEvidence } from './rule-math.js';

export const loadConcentrated: Rule = {
  id: 'load-concentrated',
  evaluate(input) {
    const t = input.thresholds;
    const d = input.decisions;
    // servers known from the configuration or logs count even when they took nothing (that is the point)
    const n = Math.max(d.serverCount, input.servers.length);
    if (n < 2 || d.decisions < t.minDecisions || d.topServer === null) return null;
    const even = 1 / n;
    if (d.topServerShare < even + t.concentrationExcess) return null;
    const top = input.servers.find((s) => s.server === d.topServer);
    const others = input.servers.filter((s) => s.server !== d.topServer);
    const othersInflight = others.map((s) => s.meanInflight).filter((v): v is number => v !== null);
    const meanOthers =
      othersInflight.length > 0 ? othersInflight.reduce((a, b) => a + b, 0) / othersInflight.length : null;
    const topInflight = top?.meanInflight ?? null;
    // a server that takes more requests yet holds fewer in flight than the others finishes them faster (cache hits
    // prefill quickly): a load-aware router sending it more is balancing, and there is no queue to warn about
    if (topInflight !== null && meanOthers !== null && topInflight <= meanOthers) return null;
    const queue =
      topInflight !== null && meanOthers !== null
        ? `: ${topInflight.toFixed(1)} requests in flight there on average, ${meanOthers.toFixed(1)} on the others`
        : '';
    // a cap at 1.5 × an even share of what is in flight lets the others take the overflow
    const totalInflight = input.servers.reduce((sum, s) => sum + (s.meanInflight ?? 0), 0);
    const cap = Math.max(1, Math.ceil((1.5 * totalInflight) / n));
    return {
      servers: [d.topServer],
      summary: `${d.topServer} took ${percent(d.topServerShare)} of ${d.decisions} requests (an even share is ${percent(even)})${queue}`,
      evidence: {
        top_server: d.topServer,
        top_server_share: round3(d.topServerShare),
        even_share: round3(even),
        decisions: d.decisions,
        top_server_mean_inflight: topInflight === null ? 'unknown' : round3(topInflight),
        other_servers_mean_inflight: meanOthers === null ? 'unknown' : round3(meanOthers),
        ...windowEvidence(input.window),
      },
      cause:
        'docs/trtllm-wire.md §1.4: the cache term outweighs the load term, so a prefix shared by all requests pulls them to the server that cached it first; ' +
        'prefix-cache hits stay high, the cost is queueing (TTFT) on that server while the others idle',
      fix:
        `if that server's queueing costs more than the hits gain (compare TTFT across servers): newest router: router_args.load_cap: ${cap} ` +
        `(1.5 × an even share of the in-flight requests) or a larger load_weight; 2026-06 router: a smaller router_args.max_batch_size ` +
        `(the load term is active/max_batch_size); otherwise nothing to do`,
    };
  },
};
