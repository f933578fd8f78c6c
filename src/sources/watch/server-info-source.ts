// Reads each CTX worker's /server_info (non-destructive): the effective event hash algorithm and block size.
import { parseServerInfo } from '../../core/wire/parse-server-info.js';
import { fetchText, reasonOf } from '../http/fetch-text.js';
import { PollingSource, type PollResult } from '../polling-source.js';
import type { Clock, ObservationSink, SourceReporter } from '../ports.js';

export function createServerInfoSource(
  deps: { sink: ObservationSink; status: SourceReporter; clock: Clock },
  options: {
    server: string;
    url: string;
    intervalMs: number;
    /** after a failed read, read again this soon (the poll interval): an unreachable worker shows within seconds */
    retryMs?: number;
    timeoutMs: number;
    maxBytes: number;
  },
): PollingSource {
  const name = `server-info:${options.server}`;
  const endpoint = `${options.url.replace(/\/+$/, '')}/server_info`;
  const retry = options.retryMs !== undefined ? { retryMs: options.retryMs } : {};
  return new PollingSource(
    name,
    options.intervalMs,
    async (signal): Promise<PollResult> => {
      let text: string;
      try {
        text = (await fetchText(endpoint, { timeoutMs: options.timeoutMs, maxBytes: options.maxBytes, signal })).text;
      } catch (err) {
        deps.status.fail(name, reasonOf(err), err instanceof Error ? err.message : String(err));
        return 'failed';
      }
      const parsed = parseServerInfo(text);
      for (const i of parsed.issues) deps.status.badInput(name, i.code);
      if (parsed.value === null) {
        deps.status.fail(name, 'parse', `${endpoint}: ${parsed.issues[0]?.message ?? 'not a JSON object'}`);
        return 'failed';
      }
      deps.status.ok(name);
      deps.sink.apply({
        kind: 'server-info',
        ts: deps.clock(),
        server: options.server,
        hashAlgo: parsed.value.kvCacheHashAlgo,
        tokensPerBlock: parsed.value.tokensPerBlock,
      });
    },
    retry,
  );
}
