// The HTML page at `/`: what the sidecar watches, whether each source is up, and the findings that hold now.
import { LANDING_REFRESH_SECONDS, tailCommand } from './landing-self.js';
import type { SourceStatus } from '../core/observe/ports.js';
import type { Finding } from '../core/diagnosis/finding.js';
import type { Verdict } from '../core/diagnosis/verdict.js';

export interface LandingInfo {
  readonly version: string;
  /** this sidecar's own address (http://HOST:PORT) for its `kvsentinel tail` command */
  readonly self?: string;
  readonly verdict: Verdict | null;
  readonly sources: readonly SourceStatus[];
  readonly findings: readonly Finding[];
  /** relay ports: worker id → listen address and upstream */
  readonly relays: readonly {
    readonly id: string;
    readonly listen: string;
    readonly upstream: string;
    /** who polls this relay's /kv_cache_events, and how far behind each is */
    readonly consumers: readonly {
      readonly consumer: string;
      readonly backlog: number;
      readonly delivered: number;
      readonly dropped: number;
    }[];
  }[];
}

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The landing page's content below its title: links, findings, sources, relay ports (the live report embeds it). */
export function renderLandingSections(info: LandingInfo): string {
  const sources = info.sources
    .map(
      (s) =>
        `<tr><td>${esc(s.source)}</td><td class="${s.up ? 'up' : 'down'}">${s.up ? 'up' : s.seen ? 'down' : 'not read yet'}</td><td>${esc(s.lastError ?? '')}</td></tr>`,
    )
    .join('\n');
  const findings =
    info.findings.length === 0
      ? '<p>No active findings.</p>'
      : `<table><tr><th>finding</th><th>severity</th><th>servers</th><th>summary</th><th>fix</th></tr>${info.findings
          .map(
            (f) =>
              `<tr><td>${esc(f.id)}</td><td class="${esc(f.severity)}">${esc(f.severity)}</td><td>${esc(f.servers.join(', '))}</td><td>${esc(f.summary)}</td><td><code>${esc(f.fix)}</code></td></tr>`,
          )
          .join('\n')}</table>`;
  const relays = info.relays
    .map((r) => {
      const consumers =
        r.consumers.length === 0
          ? 'none yet (is the router polling this port?)'
          : r.consumers
              .map((c) => `${esc(c.consumer)}: ${c.delivered} delivered, backlog ${c.backlog}, dropped ${c.dropped}`)
              .join('<br>');
      return `<tr><td>${esc(r.id)}</td><td>${esc(r.listen)}</td><td>${esc(r.upstream)}</td><td>${consumers}</td></tr>`;
    })
    .join('\n');
  return `<p>Diagnoses a KV-cache-aware router from the outside. Verdict: <b>${esc(info.verdict ?? 'unknown')}</b></p>
<p><a href="/metrics">Metrics</a> · <a href="/-/healthy">Health</a> · <a href="/-/ready">Readiness</a> · live feed: <code>${esc(tailCommand(info.self ?? 'http://HOST:PORT'))}</code> (WebSocket <code>/ws</code>; <code>--summary</code> for one screen)</p>
<h2>Findings</h2>
${findings}
<h2>Sources</h2>
<table><tr><th>source</th><th>status</th><th>last error</th></tr>
${sources}
</table>
${info.relays.length > 0 ? `<h2>Relay ports</h2><table><tr><th>worker</th><th>listen</th><th>upstream</th><th>event consumers</th></tr>\n${relays}\n</table>` : ''}`;
}

export function renderLandingPage(info: LandingInfo): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><meta http-equiv="refresh" content="${LANDING_REFRESH_SECONDS}"><title>kvsentinel</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}
.up{color:#080}.down,.critical{color:#b00}.warning{color:#a60}</style></head>
<body><h1>kvsentinel ${esc(info.version)}</h1>
${renderLandingSections(info)}
</body></html>
`;
}
