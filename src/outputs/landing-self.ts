// What the landing page says about the sidecar serving it: the `kvsentinel tail` command for this very sidecar
// (its address as the browser reached it, else the bound one), and how often the page reloads itself when no live
// update can reach it.
import { hostname } from 'node:os';

/** seconds between reloads of a page without live updates */
export const LANDING_REFRESH_SECONDS = 10;

/** `http://HOST:PORT` of this sidecar: the Host header a browser used, else the bound address (a wildcard → hostname). */
export function selfUrl(bound: { host: string; port: number }, hostHeader: string | null): string {
  if (hostHeader !== null && /^[A-Za-z0-9.\-[\]:]+$/.test(hostHeader)) return `http://${hostHeader}`;
  const wildcard = bound.host === '0.0.0.0' || bound.host === '::' || bound.host === '';
  const host = wildcard ? hostname() : bound.host.includes(':') ? `[${bound.host}]` : bound.host;
  return `http://${host}:${bound.port}`;
}

export function tailCommand(url: string): string {
  return `kvsentinel tail ${url}`;
}
