// The daemon's observation stream (/ws?view=observations): fed by the state's applied observations, describing the
// sidecar to each client (its vantage point, table bound, sources, malformed inputs, source notes). Null when the
// state port does not offer its applied observations.
import { ObservationStream } from '../../outputs/observation-stream.js';
import type { Clock, Logger } from '../../sources/ports.js';
import type { SourceStatusBoard } from '../../sources/source-status.js';
import { malformedInputs } from '../audit/audit-run.js';
import type { ServeConfig } from '../config/serve-config.js';
import { recordingModeOf, stateModeOf } from '../state-presets.js';
import { VERSION } from '../version.js';
import type { StatePort } from './daemon.js';

export function createObservationStream(
  state: StatePort,
  deps: {
    readonly config: () => ServeConfig;
    readonly status: SourceStatusBoard;
    readonly clock: Clock;
    readonly logger: Logger;
  },
): ObservationStream | null {
  if (state.onApplied === undefined) return null;
  const stream = new ObservationStream({
    clock: deps.clock,
    logger: deps.logger,
    version: VERSION,
    info: {
      get mode() {
        return stateModeOf(deps.config());
      },
      get recordingMode() {
        return recordingModeOf(deps.config());
      },
      get tableBlocksPerServer() {
        return deps.config().state.maxTableBlocks;
      },
      sources: () => deps.status.list().map((s) => s.source),
      malformed: () => malformedInputs(deps.status.list()),
      notes: () =>
        deps.status.list().flatMap((s) => (s.note !== undefined && s.note !== null ? [`${s.source}: ${s.note}`] : [])),
    },
  });
  state.onApplied((observation, digest) => stream.publish(observation, digest));
  return stream;
}
