// Maps how other components name a CTX server (the router's `host:port`, a URL, a relay port) to the sidecar's
// server id, so observations from every source join on one id. Unknown names pass through unchanged.

export type ServerResolver = (name: string) => string;

function hostPort(name: string): string {
  const trimmed = name.trim().replace(/\/+$/, '');
  try {
    if (/^[a-z]+:\/\//i.test(trimmed)) {
      const u = new URL(trimmed);
      const port = u.port !== '' ? u.port : u.protocol === 'https:' ? '443' : '80';
      return `${u.hostname.toLowerCase()}:${port}`;
    }
  } catch {
    return trimmed;
  }
  return trimmed.toLowerCase();
}

/**
 * `aliases`: server id → every name it may appear under (worker URL, relay host:port …). An alias `:PORT` matches
 * any host on that port: the router names a relay by whatever host it uses for the sidecar.
 */
export function createServerResolver(aliases: Readonly<Record<string, readonly string[]>>): ServerResolver {
  const byName = new Map<string, string>();
  for (const [id, names] of Object.entries(aliases)) {
    byName.set(id, id);
    for (const n of names) byName.set(n.startsWith(':') ? n : hostPort(n), id);
  }
  return (name) => {
    const exact = byName.get(name);
    if (exact !== undefined) return exact;
    const hp = hostPort(name);
    const port = /:(\d+)$/.exec(hp)?.[1];
    return byName.get(hp) ?? (port !== undefined ? byName.get(`:${port}`) : undefined) ?? name;
  };
}
