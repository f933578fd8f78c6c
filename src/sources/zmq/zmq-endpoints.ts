// Where each rank of a ZMQ KV-event publisher listens: TensorRT-LLM, vLLM and SGLang all bind base port + rank
// (ipc:// and inproc:// endpoints get a `_dp<rank>` suffix instead, rank 0 unchanged). A wildcard host in the
// publisher's own setting (tcp://*:5557) is not an address to connect to, so it is refused here.

export function rankEndpoint(endpoint: string, rank: number): string {
  if (rank === 0) return endpoint;
  if (endpoint.startsWith('ipc://') || endpoint.startsWith('inproc://')) return `${endpoint}_dp${rank}`;
  const colon = endpoint.lastIndexOf(':');
  const port = Number(endpoint.slice(colon + 1));
  return `${endpoint.slice(0, colon)}:${port + rank}`;
}

/** A reason the endpoint cannot be connected to, or null when it is fine. */
export function endpointProblem(endpoint: string, ranks: number): string | null {
  if (endpoint.startsWith('ipc://') || endpoint.startsWith('inproc://'))
    return endpoint.length > 'ipc://'.length ? null : 'an empty path';
  const m = /^tcp:\/\/(\[[^\]]+\]|[^:/]+):(\d+)$/.exec(endpoint);
  if (m === null) return 'expected tcp://HOST:PORT (or ipc://PATH)';
  if (m[1] === '*' || m[1] === '0.0.0.0' || m[1] === '[::]')
    return `${m[1]} is the publisher's bind address; give the worker's host`;
  const port = Number(m[2]);
  if (port < 1 || port + ranks - 1 > 65_535)
    return `ports ${port}..${port + ranks - 1} (base port + rank) are not all in 1..65535`;
  return null;
}
