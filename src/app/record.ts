// `record`: runs the same sources as `serve` (relay ports included) for a duration and writes every observation to
// a bundle (docs/design.md §7) that the offline audit replays.
import { errorMessage, KvsentinelError } from '../core/errors.js';
import { createSentinelState } from '../core/state/sentinel-state.js';
import { BundleWriter } from '../outputs/bundle-writer.js';
import type { Logger } from '../sources/ports.js';
import type { ServeConfig } from './config/serve-config.js';
import { createDaemon } from './daemon/daemon.js';
import { runFor } from './duration-runner.js';
import { relayOwnershipNotices, stopSaying } from './relay-ownership.js';
import { recordingModeOf, stateOptionsFor } from './state-presets.js';
import { VERSION } from './version.js';

export interface RecordOptions {
  readonly out: string;
  readonly durationMs: number;
  /** keep prompt token ids in the bundle (default: only the block digests the joins need) */
  readonly includePrompts: boolean;
  readonly logger: Logger;
  /** what the recording says always (not as progress): relay ports it owns, what its end waits for */
  readonly notice?: (line: string) => void;
}

export interface RecordResult {
  readonly observations: number;
  /** the audit's source-unreachable summary when the recording ended with a source down (the CLI exits 5), else null */
  readonly unreachable: string | null;
}

export async function recordBundle(config: ServeConfig, options: RecordOptions): Promise<RecordResult> {
  let writer: BundleWriter;
  try {
    writer = await BundleWriter.create(options.out, {
      mode: recordingModeOf(config),
      version: VERSION,
      includePrompts: options.includePrompts,
    });
  } catch (err) {
    throw new KvsentinelError('write-failed', `--out ${options.out}: ${errorMessage(err)}`, { cause: err });
  }
  // the daemon's landing info reads a state; the recording itself only writes (and feeds it the sources' health)
  const state = createSentinelState(stateOptionsFor('oneShot', config));
  let writeError: Error | null = null;
  const daemon = createDaemon(config, {
    web: false,
    logger: options.logger,
    createState: () => ({
      apply(o) {
        // the sources' health, for the audit's own source-unreachable rule at the end
        if (o.kind === 'source-health') state.apply(o);
        if (writeError !== null) return;
        try {
          writer.write(o);
        } catch (err) {
          writeError = err instanceof Error ? err : new KvsentinelError('write-failed', String(err));
        }
      },
      evaluate: (now) => state.evaluate(now),
      snapshot: (now) => state.snapshot(now),
      lastEvaluation: () => state.lastEvaluation(),
      subscribe: (listener) => state.subscribe(listener),
    }),
  });
  try {
    await daemon.start();
  } catch (err) {
    await daemon.stop();
    await writer.close();
    throw new KvsentinelError('start-failed', `cannot start the sources: ${errorMessage(err)}`, { cause: err });
  }
  const notice = options.notice ?? ((): void => undefined);
  const owned = relayOwnershipNotices('record', config, daemon, options.durationMs);
  if (owned !== null) notice(owned.start);
  await runFor({ durationMs: options.durationMs }); // Ctrl-C ends the recording early; the bundle stays complete
  await stopSaying(daemon, config, notice, 'record');
  if (owned !== null) notice(owned.end);
  const manifest = await writer.close();
  if (writeError !== null)
    throw new KvsentinelError('write-failed', `--out ${options.out}: ${(writeError as Error).message}`);
  const unreachable = state.evaluate(Date.now()).findings.find((f) => f.id === 'source-unreachable')?.summary ?? null;
  return { observations: manifest.observations ?? writer.observations, unreachable };
}
