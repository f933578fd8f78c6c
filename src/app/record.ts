// `record`: runs the same sources as `serve` (relay ports included) for a duration and writes every observation to
// a bundle (docs/design.md §7) that the offline audit replays.
import { errorMessage, KvsentinelError } from '../core/errors.js';
import { createSentinelState } from '../core/state/sentinel-state.js';
import { BundleWriter } from '../outputs/bundle-writer.js';
import type { Logger } from '../sources/ports.js';
import type { ServeConfig } from './config/serve-config.js';
import { createDaemon } from './daemon/daemon.js';
import { runFor } from './duration-runner.js';
import { stateOptionsFor } from './state-presets.js';
import { VERSION } from './version.js';

export interface RecordOptions {
  readonly out: string;
  readonly durationMs: number;
  /** keep prompt token ids in the bundle (default: only the block digests the joins need) */
  readonly includePrompts: boolean;
  readonly logger: Logger;
}

export interface RecordResult {
  readonly observations: number;
}

/** The bundle's vantage point: what a later audit of it assumes. */
function recordingMode(config: ServeConfig): 'exclusive' | 'relay' | 'watch' {
  return config.ctx.some((c) => c.events === 'exclusive') ? 'exclusive' : config.relays.length > 0 ? 'relay' : 'watch';
}

export async function recordBundle(config: ServeConfig, options: RecordOptions): Promise<RecordResult> {
  let writer: BundleWriter;
  try {
    writer = await BundleWriter.create(options.out, {
      mode: recordingMode(config),
      version: VERSION,
      includePrompts: options.includePrompts,
    });
  } catch (err) {
    throw new KvsentinelError('write-failed', `--out ${options.out}: ${errorMessage(err)}`, { cause: err });
  }
  // the daemon's landing info reads a state; the recording itself only writes
  const state = createSentinelState(stateOptionsFor('oneShot', config));
  let writeError: Error | null = null;
  const daemon = createDaemon(config, {
    web: false,
    logger: options.logger,
    createState: () => ({
      apply(o) {
        if (writeError !== null) return;
        try {
          writer.write(o);
        } catch (err) {
          writeError = err instanceof Error ? err : new Error(String(err));
        }
      },
      snapshot: (now) => state.snapshot(now),
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
  await runFor({ durationMs: options.durationMs }); // Ctrl-C ends the recording early; the bundle stays complete
  await daemon.stop();
  const manifest = await writer.close();
  if (writeError !== null)
    throw new KvsentinelError('write-failed', `--out ${options.out}: ${(writeError as Error).message}`);
  return { observations: manifest.observations ?? writer.observations };
}
