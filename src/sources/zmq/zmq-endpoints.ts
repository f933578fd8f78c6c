// Where each rank of a ZMQ KV-event publisher listens: TensorRT-LLM, vLLM and SGLang all bind base port + rank
// (ipc:// and inproc:// endpoints get a `_dp<rank>` suffix instead, rank 0 unchanged). A wildcard host in the
// publisher's own setting (tcp://*:5557) is not an address to connect to, so it is refused here, as is inproc://
// (kvsentinel is never in the process of a socket it connects to). connectTarget reads what was accepted.
import { KvsentinelError } from '../../core/errors.js';

export function rankEndpoint(endpoint: string, rank: number): string {
  if (rank === 0) return endpoint;
  if (endpoint.startsWith('ipc://') || endpoint.startsWith('inproc://')) return `${endpoint}_dp${rank}`;
  const colon = endpoint.lastIndexOf(':');
  const port = Number(endpoint.slice(colon + 1));
  return `${endpoint.slice(0, colon)}:${port + rank}`;
}

/** tcp://HOST:PORT: the host as written (an IPv6 one in brackets), the IPv6 host without them, the port */
const TCP_ENDPOINT = /^tcp:\/\/(\[([^\]]+)\]|[^:/]+):(\d+)$/;

/** A reason the endpoint cannot be connected to, or null when it is fine. */
export function endpointProblem(endpoint: string, ranks: number): string | null {
  // a kvsentinel process is never in the same process as a publisher or consumer it connects to
  if (endpoint.startsWith('inproc://'))
    return "inproc:// reaches only sockets of the same process; give the peer's tcp://HOST:PORT or ipc://PATH";
  if (endpoint.startsWith('ipc://')) return endpoint.length > 'ipc://'.length ? null : 'an empty path';
  const m = TCP_ENDPOINT.exec(endpoint);
  if (m === null) return 'expected tcp://HOST:PORT (or ipc://PATH)';
  if (m[1] === '*' || m[1] === '0.0.0.0' || m[1] === '[::]')
    return `${m[1]} is the publisher's bind address; give the worker's host`;
  const port = Number(m[3]);
  if (port < 1 || port + ranks - 1 > 65_535)
    return `ports ${port}..${port + ranks - 1} (base port + rank) are not all in 1..65535`;
  return null;
}

export type ConnectTarget = { readonly path: string } | { readonly host: string; readonly port: number };

/** Where a tcp://HOST:PORT or ipc://PATH endpoint is, for net.connect (an endpoint endpointProblem accepted). */
export function connectTarget(endpoint: string): ConnectTarget {
  if (endpoint.startsWith('ipc://')) return { path: endpoint.slice('ipc://'.length) };
  const m = TCP_ENDPOINT.exec(endpoint);
  // endpoints are checked where they are configured (endpointProblem): one that reaches here unchecked is a bug
  if (m === null) throw new KvsentinelError('internal', `${endpoint}: expected tcp://HOST:PORT or ipc://PATH`);
  return { host: m[2] ?? m[1]!, port: Number(m[3]) };
}
