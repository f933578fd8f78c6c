// Polls the router debug endpoint (docs/design.md §8) with `since=` the last decision seq, so each decision is read once.
import type { ServerResolver } from '../../core/watch/server-resolver.js';
import { parseRouterDebug } from '../../core/watch/router-debug.js';
import { fetchText, reasonOf } from '../http/fetch-text.js';
import { PollingSource } from '../polling-source.js';
import type { Clock, ObservationSink, SourceReporter } from '../ports.js';

export interface RouterDebugOptions {
  /** the endpoint, e.g. http://router:8000/debug/router (a bare base URL gets /debug/router appended) */
  readonly url: string;
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly maxBytes: number;
}

export function routerDebugEndpoint(url: string): string {
  const u = url.replace(/\/+$/, '');
  return /\/debug\/router$/.test(u) ? u : `${u}/debug/router`;
}

export function createRouterDebugSource(
  deps: { sink: ObservationSink; status: SourceReporter; clock: Clock; resolve: ServerResolver },
  options: RouterDebugOptions,
): PollingSource {
  const name = 'router-debug';
  const endpoint = routerDebugEndpoint(options.url);
  let since: number | null = null;
  return new PollingSource(name, options.intervalMs, async (signal) => {
    let text: string;
    try {
      text = (
        await fetchText(since === null ? endpoint : `${endpoint}?since=${since}`, {
          timeoutMs: options.timeoutMs,
          maxBytes: options.maxBytes,
          signal,
        })
      ).text;
    } catch (err) {
      deps.status.fail(name, reasonOf(err), err instanceof Error ? err.message : String(err));
      return;
    }
    const parsed = parseRouterDebug(text, deps.clock(), deps.resolve, since);
    if (parsed.observations.length === 0 && parsed.issues.length > 0) {
      deps.status.fail(name, 'parse', `${endpoint}: ${parsed.issues[0]?.message ?? 'unreadable'}`);
      for (const i of parsed.issues) deps.status.badInput(name, i.code);
      return;
    }
    for (const i of parsed.issues) deps.status.badInput(name, i.code);
    deps.status.ok(name);
    if (parsed.maxSeq !== null) since = Math.max(since ?? parsed.maxSeq, parsed.maxSeq);
    for (const o of parsed.observations) deps.sink.apply(o);
  });
}
