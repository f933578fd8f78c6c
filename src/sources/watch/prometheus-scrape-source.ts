// Optional, non-destructive scrape of a worker's /prometheus/metrics (unlike /metrics, which drains iteration stats):
// it tells whether the worker is up and answering, as kvsentinel_up{source="prometheus:ID"}. The values themselves
// are left to Prometheus, which scrapes the worker directly.
import { fetchText, reasonOf } from '../http/fetch-text.js';
import { PollingSource } from '../polling-source.js';
import type { SourceReporter } from '../ports.js';

const SAMPLE = /^[a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?\s+\S+/m;

export function createPrometheusScrapeSource(
  deps: { status: SourceReporter },
  options: { server: string; url: string; intervalMs: number; timeoutMs: number; maxBytes: number },
): PollingSource {
  const name = `prometheus:${options.server}`;
  const endpoint = `${options.url.replace(/\/+$/, '')}/prometheus/metrics`;
  return new PollingSource(name, options.intervalMs, async (signal) => {
    try {
      const { text } = await fetchText(endpoint, { timeoutMs: options.timeoutMs, maxBytes: options.maxBytes, signal });
      if (text.trim() !== '' && !SAMPLE.test(text)) {
        deps.status.fail(name, 'parse', `${endpoint}: not the Prometheus text format`);
        return;
      }
      deps.status.ok(name);
    } catch (err) {
      deps.status.fail(name, reasonOf(err), err instanceof Error ? err.message : String(err));
    }
  });
}
