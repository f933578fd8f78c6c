// Header hygiene for a reverse proxy: hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection and are not
// forwarded; everything else passes unchanged, including repeated headers. Runs twice per proxied request, so the
// common case (no Connection header, or one naming only hop-by-hop headers) allocates nothing beyond the result.
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** header names the Connection header lists beyond the standard hop-by-hop ones (null: none) */
function connectionTokens(value: string | string[] | undefined): Set<string> | null {
  if (value === undefined) return null;
  let extra: Set<string> | null = null;
  for (const part of Array.isArray(value) ? value : [value])
    for (const raw of part.split(',')) {
      const t = raw.trim().toLowerCase();
      if (t !== '' && !HOP_BY_HOP.has(t)) (extra ??= new Set()).add(t);
    }
  return extra;
}

/** Request headers for the upstream; `host` is dropped so the upstream sees its own authority. */
export function upstreamRequestHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const extra = connectionTokens(headers.connection);
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || name === 'host' || HOP_BY_HOP.has(name) || extra?.has(name) === true) continue;
    out[name] = value;
  }
  return out;
}

export function downstreamResponseHeaders(headers: Record<string, string | string[] | undefined>): OutgoingHttpHeaders {
  const extra = connectionTokens(headers['connection']);
  const out: OutgoingHttpHeaders = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || HOP_BY_HOP.has(name) || extra?.has(name) === true) continue;
    out[name] = value;
  }
  return out;
}
