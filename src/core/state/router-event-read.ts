// Where the router reads KV events (docs/orchestrator-log.md, "router kinds"): the pull endpoint, ZMQ streams, or
// none. The diagnosis judges a router by its kind, so the kind comes from what the deployment states or shows —
// never from the sidecar's own mode.
import type { RouterDiagnosis, ServerDiagnosis } from '../diagnosis/rule.js';
import type { StateModel } from './state-model.js';

const ROUTERS_WITHOUT_EVENTS = ['conversation', 'round_robin', 'load_balancing'];

function readsNoEvents(type: string | null): boolean {
  if (type === null) return false;
  const t = type.toLowerCase().replace(/[-\s]/g, '_');
  return ROUTERS_WITHOUT_EVENTS.some((name) => t.includes(name));
}

/**
 * Where the router reads KV events: stated by the configuration, else by its type (the conversation, round-robin
 * and load-balancing routers read none), its polls through the relay (the pull endpoint), or — for a
 * KV-cache-aware router — the event path its workers serve: a pull endpoint some server's drains read, else ZMQ
 * streams. Never the sidecar's own mode, so a live audit and the audit of its bundle agree.
 */
export function routerEventRead(
  m: StateModel,
  servers: readonly ServerDiagnosis[],
): Pick<RouterDiagnosis, 'readsEvents' | 'readsEventsFrom'> {
  const router = m.deployment.router;
  if (router.readsEvents !== null) return { readsEvents: router.readsEvents, readsEventsFrom: 'stated' };
  if (readsNoEvents(router.routerType)) return { readsEvents: 'none', readsEventsFrom: 'router type' };
  if (m.paths.seesRouterPolls) return { readsEvents: 'pull', readsEventsFrom: 'its polls' };
  const kvAware = router.profile !== null || router.routerType?.toLowerCase().includes('kv_cache_aware') === true;
  if (!kvAware) return { readsEvents: null, readsEventsFrom: null };
  if (servers.some(pullPathServed)) return { readsEvents: 'pull', readsEventsFrom: 'the event path' };
  if (servers.some((s) => s.streamed)) return { readsEvents: 'stream', readsEventsFrom: 'the event path' };
  return { readsEvents: null, readsEventsFrom: null };
}

/** a server whose pull endpoint the sidecar drains (not only its ZMQ stream) */
export function pullPathServed(s: ServerDiagnosis): boolean {
  return !s.streamed && s.drains > 0;
}
