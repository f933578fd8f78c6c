// A one-shot command given --relay owns the ports the router sends its CTX requests to: when it ends they close,
// and a router still pointed at them fails every CTX request (the simulated router went from 37 to 1,616 failed
// requests within 16 s after `record` ended). It says so when it starts and when it ends.
import { formatElapsedShort } from '../outputs/time-text.js';
import type { ServeConfig } from './config/serve-config.js';
import type { Daemon } from './daemon/daemon.js';

function ports(config: ServeConfig, daemon: Daemon): string {
  return config.relays
    .map(
      (r) =>
        `${daemon
          .relayAddresses(r.id)
          .map((a) => `${a.host}:${a.port}`)
          .join(',')} (${r.id})`,
    )
    .join(', ');
}

/** What to say at the start and at the end; null when the command owns no relay port. */
export function relayOwnershipNotices(
  command: 'audit' | 'record',
  config: ServeConfig,
  daemon: Daemon,
  durationMs: number,
): { readonly start: string; readonly end: string } | null {
  if (config.relays.length === 0) return null;
  const owned = ports(config, daemon);
  return {
    start:
      `kvsentinel ${command}: this ${command} owns relay ports ${owned}; the router's CTX requests sent to them pass through it, ` +
      `and when it ends (in ${formatElapsedShort(durationMs)}) they close: a router still pointed at them then fails every CTX request. ` +
      `To ${command} without touching routing, run \`kvsentinel serve\` with these relays and \`kvsentinel ${command} --attach http://SIDECAR:9464\``,
    end:
      `kvsentinel ${command}: relay ports ${owned} are closed now: a router still sending CTX requests to them fails them; ` +
      "point its context_servers back at the workers, or at a running kvsentinel serve's relay ports",
  };
}

/**
 * Stops a one-shot command's sources, saying what the stop waits for: in-flight relay requests finish for up to
 * relay.shutdown_grace (Ctrl-C cuts them), and a stop that took long says how long (`record` overran its 60 s by
 * ~12 s without a word).
 */
export async function stopSaying(
  daemon: Daemon,
  config: ServeConfig,
  notice: (line: string) => void,
  command: 'audit' | 'record',
): Promise<void> {
  const hurry = (): void => daemon.hurry();
  process.once('SIGINT', hurry);
  const inFlight = daemon.inFlightRelayRequests();
  if (inFlight > 0)
    notice(
      `kvsentinel ${command}: ${command === 'audit' ? 'report done' : 'recording done'}; letting ${inFlight} in-flight relay requests finish (up to relay.shutdown_grace ${config.relay.shutdownGraceMs / 1000} s; Ctrl-C to stop now)`,
    );
  const started = Date.now();
  await daemon.stop();
  process.off('SIGINT', hurry);
  const took = Date.now() - started;
  if (took >= 1_000)
    notice(
      `kvsentinel ${command}: stopping the sources took ${(took / 1000).toFixed(1)} s${inFlight > 0 ? ` (${inFlight} in-flight relay requests finishing)` : ''}`,
    );
}
