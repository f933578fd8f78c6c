// Loopback helpers for the end-to-end sections.
import { createServer } from 'node:net';

// ports this run has handed out: the kernel may offer a closed port again, and two listeners of one run must differ
const handedOut = new Set<number>();

/** A free TCP port on 127.0.0.1 (bound and released; the tiny race is acceptable on a bench machine). */
function probePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** A port free now and not handed out before in this process. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await probePort();
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

/** Resolves once `url` answers (any HTTP status below 500), polling every 100 ms. */
export async function waitForHttp(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.status < 500) return;
      last = `HTTP ${res.status}`;
    } catch (e) {
      last = e instanceof Error ? e.message : String(e);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms (${last})`);
}
