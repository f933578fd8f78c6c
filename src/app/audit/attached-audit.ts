// The one-shot audit of a running sidecar (`audit --attach URL`): it reads the sidecar's observation stream for a
// window into its own one-shot state, as an offline audit reads a bundle, and reports. It owns no relay port and
// reads no worker queue, so ending it leaves routing exactly as it was: the sidecar keeps relaying.
import { decodeObservation } from '../../core/bundle/bundle-observation.js';
import { DecodeError, type JsonObject } from '../../core/bundle/bundle-fields.js';
import { KeyHistory } from '../../core/bundle/bundle-keys.js';
import { buildAuditReport } from '../../core/report/audit-report.js';
import { sampleOf, Timeline } from '../../core/report/timeline.js';
import { createSentinelState } from '../../core/state/sentinel-state.js';
import { ObservationFeed, type ObservationFeedTick } from '../../sources/attach/observation-feed.js';
import { formatElapsedShort } from '../../outputs/time-text.js';
import { runFor } from '../duration-runner.js';
import { STATE_PRESETS } from '../state-presets.js';
import type { AuditRun } from './audit-run.js';

export interface AttachedAuditOptions {
  readonly durationMs: number;
  readonly bearerToken?: string | null;
  /** a progress line every few seconds while the window lasts */
  readonly progress: (line: string) => void;
  /** what the command says always (not as progress): when it starts and when the stream ended early */
  readonly notice: (line: string) => void;
}

/** the first lines the audit could not decode are named in its notes; the rest are counted */
const NAMED_ISSUES = 3;

export async function runAttachedAudit(target: string, options: AttachedAuditOptions): Promise<AuditRun> {
  const feed = await ObservationFeed.connect(target, { bearerToken: options.bearerToken ?? null });
  const hello = feed.hello;
  const state = createSentinelState({
    ...STATE_PRESETS.oneShot,
    mode: hello.mode,
    ...(hello.tableBlocksPerServer !== null ? { limits: { tableBlocksPerServer: hello.tableBlocksPerServer } } : {}),
  });
  const history = new KeyHistory(hello.keyHistory);
  const timeline = new Timeline();
  let observations = 0;
  let undecodable = 0;
  const issues: string[] = [];
  let now = hello.ts;
  let lastTick: ObservationFeedTick | null = null;
  feed.read({
    line(_text, parsed) {
      let record;
      try {
        record = decodeObservation(parsed as JsonObject, history);
      } catch (err) {
        if (!(err instanceof DecodeError)) throw err;
        undecodable++;
        if (issues.length < NAMED_ISSUES) issues.push(`${err.path}: ${err.message}`);
        return;
      }
      state.apply(record.observation, record.digest);
      observations++;
      if (record.observation.ts > now) now = record.observation.ts;
      timeline.offer(now, () => state.rulesAt(now));
    },
    tick(tick) {
      lastTick = tick;
      if (tick.ts > now) now = tick.ts;
      timeline.offer(now, () => state.rulesAt(now));
    },
  });
  options.notice(
    `kvsentinel: attached to ${feed.url} (kvsentinel ${hello.version}; ${hello.sources.length > 0 ? hello.sources.join(', ') : 'no sources yet'}); auditing ${formatElapsedShort(options.durationMs)}. The sidecar keeps relaying when this ends: routing is untouched`,
  );
  const started = Date.now();
  let endedEarly: { code: number; reason: string } | null = null;
  await runFor({
    durationMs: options.durationMs,
    onProgress: (leftMs) =>
      options.progress(
        `kvsentinel: attached to ${feed.url}: ${observations.toLocaleString('en-US')} observations, ${(leftMs / 1000).toFixed(0)} s left`,
      ),
    interrupt: (stop) => {
      // Ctrl-C ends the window early; so does the sidecar ending the stream (it stopped, or found us too slow)
      process.once('SIGINT', stop);
      let listening = true;
      void feed.ended.then((end) => {
        if (!listening || !end.byPeer) return;
        endedEarly = end;
        stop();
      });
      return () => {
        listening = false;
        process.off('SIGINT', stop);
      };
    },
  });
  await feed.close();
  const seconds = (Date.now() - started) / 1000;
  const snapshot = state.evaluate(now);
  timeline.add(sampleOf(snapshot));
  const built = buildAuditReport(snapshot, {
    kind: 'live',
    description: `kvsentinel serve at ${feed.url} for ${formatElapsedShort(seconds * 1000)} (${hello.sources.join(', ') || 'no sources'})`,
    observations,
    malformed: Math.max(0, ((lastTick as ObservationFeedTick | null)?.malformed ?? hello.malformed) - hello.malformed),
  });
  const ended = endedEarly as { code: number; reason: string } | null;
  const notes = [
    ...(ended !== null
      ? [
          `the sidecar ended the observation stream after ${seconds.toFixed(0)} s of ${(options.durationMs / 1000).toFixed(0)} (${ended.code}${ended.reason !== '' ? `: ${ended.reason}` : ''}): this report covers what it sent until then`,
        ]
      : []),
    ...(undecodable > 0
      ? [`${undecodable} lines of the observation stream could not be read and were skipped (${issues.join('; ')})`]
      : []),
    ...((lastTick as ObservationFeedTick | null)?.notes ?? []),
  ];
  const report = notes.length > 0 ? { ...built, notes: [...built.notes, ...notes] } : built;
  return { report, samples: timeline.samples, sampleIntervalMs: timeline.intervalMs, input: state.diagnosisInput(now) };
}
