// What the networked tests share: a list of cleanups run after each test (newest first, so a daemon stops before
// the worker it relays to), a port that was free a moment ago (for daemons that need it on a command line), and a
// wait on an async read that never leaves a read in flight (one left behind fails as an unhandled rejection once
// the test stops its server).
import { createServer } from 'node:net';
import { afterEach } from 'vitest';

export type Cleanup = () => Promise<void>;

/** Registers an afterEach that runs (and empties) the returned list in reverse order; push cleanups onto it. */
export function cleanupsAfterEach(): Cleanup[] {
  const cleanups: Cleanup[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  return cleanups;
}

/** A TCP port on `host` that was free when this returned (another process may take it before you bind it). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(0, host, resolve);
  });
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** Reads until `ok` holds, one read at a time; rejects naming `what` after `timeoutMs`. Returns the last read. */
export async function readUntil<T>(
  read: () => Promise<T>,
  ok: (value: T) => boolean,
  what: string,
  timeoutMs = 5_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
