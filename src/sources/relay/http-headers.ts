// Header hygiene for a reverse proxy: hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection and are not
// forwarded; everything else passes unchanged, including repeated headers.
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

function connectionTokens(value: string | string[] | undefined): Set<string> {
  const text = Array.isArray(value) ? value.join(',') : (value ?? '');
  return new Set(
    text
      .split(',')
      .map((t) => t.trim().toLowerCase())
      .filter((t) => t !== ''),
  );
}

/** Request headers for the upstream; `host` is dropped so the upstream sees its own authority. */
export function upstreamRequestHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const extra = connectionTokens(headers.connection);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || name === 'host' || HOP_BY_HOP.has(name) || extra.has(name)) continue;
    out[name] = value;
  }
  return out;
}

export function downstreamResponseHeaders(headers: Record<string, string | string[] | undefined>): OutgoingHttpHeaders {
  const extra = connectionTokens(headers['connection']);
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || extra.has(name)) continue;
    out[name] = value;
  }
  return out;
}
