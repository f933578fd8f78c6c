// The live sidecar tests' shared frame: one simulated cluster and one daemon per test, both stopped after it even
// when the test fails, and a way to watch the daemon's verdict settle instead of sleeping a fixed time.
import { afterEach } from 'vitest';
import type { Daemon } from '../../src/app/daemon/daemon.js';
import type { LiveCluster } from '../../src/sim/live/index.js';

/** Fields set by the test (the daemon from inside the cluster's ctxUrls hook: pass this object as its holder). */
export interface LiveSidecar {
  cluster: LiveCluster | null;
  daemon: Daemon | null;
}

/** Registers the cleanup; call once at the top of a test file. */
export function liveSidecarPerTest(): LiveSidecar {
  const live: LiveSidecar = { cluster: null, daemon: null };
  afterEach(async () => {
    await live.cluster?.stop();
    await live.daemon?.stop();
    live.cluster = null;
    live.daemon = null;
  });
  return live;
}

export type DaemonSnapshot = ReturnType<Daemon['snapshot']>;

/**
 * Every snapshot the daemon gives over `ms` (one each 250 ms), stopping early once `until` holds for the latest.
 * The daemon evaluates once a second, turns a finding on after two evaluations and off after five: a test that
 * waits for a settled verdict polls for it, and can check each snapshot on the way (no page in any of them).
 */
export async function watchSnapshots(
  daemon: Daemon,
  ms: number,
  until: (s: DaemonSnapshot) => boolean = () => false,
): Promise<DaemonSnapshot[]> {
  const seen = [daemon.snapshot()];
  const deadline = Date.now() + ms;
  while (!until(seen.at(-1)!) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    seen.push(daemon.snapshot());
  }
  return seen;
}
