// events-absent: a CTX server serves requests but every drain of its /kv_cache_events comes back empty — the pull
// path returns [] by construction (event buffer 0, block reuse off, or push mode), so the router's table stays empty.
import type { Rule } from '../rule.js';
import { nextPowerOfTwo, ratio, round3, windowEvidence, windowSeconds } from './rule-math.js';

export const eventsAbsent: Rule = {
  id: 'events-absent',
  evaluate(input) {
    if (!input.seesWorkerEvents || !input.router.consumesEvents) return null;
    const t = input.thresholds;
    // relays that report only non-empty drains still show the router's polls: either proves the sidecar was listening
    const silent = input.servers.filter((s) => s.requests >= t.minServerRequests && s.events === 0);
    if (silent.length === 0) return null;
    const requests = silent.reduce((n, s) => n + s.requests, 0);
    const drains = silent.reduce((n, s) => n + s.drains, 0);
    const perServerRate = ratio(requests, silent.length) / windowSeconds(input.window);
    // room for ~30 s of events at the observed request rate (a stored, a removed and an updated event per request)
    const bufferSize = nextPowerOfTwo(Math.max(1024, perServerRate * 3 * 30));
    const names = silent.map((s) => s.server);
    return {
      servers: names,
      summary: `${names.join(', ')} served ${requests} requests, yet no event ever came out of /kv_cache_events (${drains} drains, ${silent.reduce((n, s) => n + s.routerPolls, 0)} router polls)`,
      evidence: {
        requests,
        drains,
        router_polls: silent.reduce((n, s) => n + s.routerPolls, 0),
        empty_drains: silent.reduce((n, s) => n + s.emptyDrains, 0),
        events: 0,
        events_since_start: silent.reduce((n, s) => n + s.eventsTotal, 0),
        requests_per_second_per_server: round3(perServerRate),
        ...windowEvidence(input.window),
      },
      cause: 'docs/trtllm-wire.md §7.1: the pull path returns [] by construction (event_buffer_max_size 0, block reuse off, or kv_events_config push mode)',
      fix:
        `kv_cache_config.event_buffer_max_size: ${bufferSize} and kv_cache_config.enable_block_reuse: true on CTX workers ${names.join(', ')}; ` +
        'remove kv_events_config (ZMQ push) from them, or the pull endpoint keeps returning []',
    };
  },
};
