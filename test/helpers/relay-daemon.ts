// The sidecar in relay mode in front of a live simulated cluster: a `ctxUrls` hook for startLiveCluster that starts
// the real daemon with one relay per CTX worker and points the orchestrator at the relay ports.
import { buildConfig } from '../../src/app/config/serve-config.js';
import { createDaemon, type Daemon } from '../../src/app/daemon/daemon.js';

/**
 * `settings`: the config document's other keys; `listen`: each relay's listen setting (`127.0.0.1:0,0` gives each
 * relay a second port, for a second orchestrator replica; the cluster's orchestrator gets the first). The daemon is
 * stored in `holder` as soon as it exists, so the caller can stop it even when the cluster fails.
 */
export function relayDaemonCtxUrls(
  holder: { daemon: Daemon | null },
  settings: Record<string, unknown> = { relay: { drain_interval: '100ms' }, server_info_interval: '1s' },
  listen = '127.0.0.1:0',
): (workers: readonly { id: string; url: string }[]) => Promise<Record<string, string>> {
  return async (workers) => {
    const daemon = createDaemon(
      buildConfig(
        {
          web: { listen_address: '127.0.0.1:0' },
          relays: workers.map((w) => ({ id: w.id, upstream: w.url, listen })),
          ...settings,
        },
        {},
      ),
    );
    holder.daemon = daemon;
    await daemon.start();
    return Object.fromEntries(workers.map((w) => [w.id, `127.0.0.1:${daemon.relayAddress(w.id)?.port ?? 0}`]));
  };
}
