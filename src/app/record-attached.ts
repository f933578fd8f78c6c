// `record --attach URL`: a running sidecar's observation stream written to a bundle for `audit --bundle`, line for
// line as the sidecar encoded it (digests computed there, prompts never included). It owns no relay port, so ending
// it leaves routing as it was.
import { errorMessage, KvsentinelError } from '../core/errors.js';
import { BundleWriter } from '../outputs/bundle-writer.js';
import { ObservationFeed } from '../sources/attach/observation-feed.js';
import { runFor } from './duration-runner.js';
import type { RecordResult } from './record.js';
import { VERSION } from './version.js';

export interface RecordAttachedOptions {
  readonly out: string;
  readonly durationMs: number;
  readonly bearerToken?: string | null;
  readonly notice: (line: string) => void;
}

export async function recordAttached(target: string, options: RecordAttachedOptions): Promise<RecordResult> {
  const feed = await ObservationFeed.connect(target, { bearerToken: options.bearerToken ?? null });
  let writer: BundleWriter;
  try {
    writer = await BundleWriter.create(options.out, {
      mode: feed.hello.recordingMode,
      version: VERSION,
      includePrompts: false,
      keyHistory: feed.hello.keyHistory,
      meta: { attached_to: feed.url, sidecar_version: feed.hello.version },
    });
  } catch (err) {
    await feed.close();
    throw new KvsentinelError('write-failed', `--out ${options.out}: ${errorMessage(err)}`, { cause: err });
  }
  let writeError: Error | null = null;
  feed.read({
    line(text, parsed) {
      if (writeError !== null) return;
      try {
        writer.writeEncoded(text, String(parsed['kind']), typeof parsed['ts'] === 'number' ? parsed['ts'] : 0);
      } catch (err) {
        writeError = err instanceof Error ? err : new KvsentinelError('write-failed', String(err));
      }
    },
    tick: () => undefined,
  });
  options.notice(
    `kvsentinel: recording ${feed.url} (kvsentinel ${feed.hello.version}) for ${(options.durationMs / 1000).toFixed(0)} s; the sidecar keeps relaying when this ends: routing is untouched`,
  );

  await runFor({
    durationMs: options.durationMs,
    interrupt: (stop) => {
      process.once('SIGINT', stop);
      let listening = true;
      void feed.ended.then((end) => {
        if (!listening || !end.byPeer) return;

        options.notice(
          `kvsentinel: the sidecar ended the observation stream (${end.code}${end.reason !== '' ? `: ${end.reason}` : ''}); the bundle holds what it sent until then`,
        );
        stop();
      });
      return () => {
        listening = false;
        process.off('SIGINT', stop);
      };
    },
  });
  await feed.close();
  const manifest = await writer.close();
  if (writeError !== null)
    throw new KvsentinelError('write-failed', `--out ${options.out}: ${(writeError as Error).message}`);
  // the sidecar's own sources are its to report (its /metrics, the bundle's source-health lines)
  return { observations: manifest.observations ?? writer.observations, unreachable: null };
}
