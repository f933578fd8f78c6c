// Exclusive mode (docs/design.md §3): the sidecar itself drains a worker's destructive /kv_cache_events, only because
// the operator asserted that no router consumes them. If that is false the events it takes are stolen from the
// router, and the router's own polls steal from us: per-rank event_id gaps are the evidence, so every gap is logged
// loudly (and counted by the state).
import type { ParseEvents } from '../relay/worker-relay.js';
import { splitJsonArrayBytes } from '../../core/relay/split-json-array.js';
import { consecutiveRuns } from '../../core/wire/consecutive-runs.js';
import { fetchBytes, reasonOf } from '../http/fetch-text.js';
import { PollingSource } from '../polling-source.js';
import type { Clock, Logger, ObservationSink, SourceReporter } from '../ports.js';

export function createExclusiveEventsSource(
  deps: { sink: ObservationSink; status: SourceReporter; clock: Clock; logger: Logger; parseEvents: ParseEvents },
  options: { server: string; url: string; intervalMs: number; timeoutMs: number; maxBytes: number },
): PollingSource {
  const name = `events:${options.server}`;
  const endpoint = `${options.url.replace(/\/+$/, '')}/kv_cache_events`;
  let nextSeq = 0;
  const lastIds = new Map<string, number>();
  return new PollingSource(name, options.intervalMs, async (signal) => {
    let body: Uint8Array;
    try {
      body = (
        await fetchBytes(endpoint, { method: 'POST', timeoutMs: options.timeoutMs, maxBytes: options.maxBytes, signal })
      ).bytes;
    } catch (err) {
      deps.status.fail(name, reasonOf(err), err instanceof Error ? err.message : String(err));
      return;
    }
    const split = splitJsonArrayBytes(body);
    if (!split.ok) {
      deps.status.badInput(name, split.issue.code);
      deps.status.fail(name, 'parse', `${endpoint}: ${split.issue.message}`);
      return;
    }
    deps.status.ok(name);
    if (split.items.length === 0) return;
    const firstSeq = nextSeq;
    nextSeq += split.items.length;
    const parsed = deps.parseEvents(body);
    for (const i of parsed.issues) deps.status.badInput(name, i.code);
    const ts = deps.clock();
    for (const run of consecutiveRuns(parsed.events)) {
      deps.sink.apply({
        kind: 'worker-events',
        ts,
        server: options.server,
        firstSeq: firstSeq + run.start,
        events: run.events,
      });
    }
    for (const { event } of parsed.events) {
      if (event.eventId === null) continue;
      const key = `${event.attentionDpRank ?? 0}/${event.windowSize ?? ''}/${event.layerGroupId ?? ''}`;
      const last = lastIds.get(key);
      if (last !== undefined && event.eventId > last + 1) {
        deps.logger.warn(
          `exclusive mode: ${options.server} rank ${event.attentionDpRank ?? 0} event_id jumped ${last} -> ${event.eventId}: ${event.eventId - last - 1} events were consumed by someone else (is a router polling ${options.url}?)`,
          { server: options.server },
        );
      }
      lastIds.set(key, event.eventId);
    }
  });
}
