// The live audit: run the daemon's sources (relay ports included) for a duration into a one-shot state (counters
// since the start, findings without hysteresis), then report like an offline audit.
import { buildAuditReport } from '../../core/report/audit-report.js';
import { errorMessage, KvsentinelError } from '../../core/errors.js';
import { createSentinelState } from '../../core/state/sentinel-state.js';
import type { Logger } from '../../sources/ports.js';
import type { ServeConfig } from '../config/serve-config.js';
import { createDaemon } from '../daemon/daemon.js';
import { startTimelineSampler } from '../daemon/timeline-sampler.js';
import { formatElapsedShort } from '../../outputs/time-text.js';
import { runFor } from '../duration-runner.js';
import { relayOwnershipNotices, stopSaying } from '../relay-ownership.js';
import { stateOptionsFor } from '../state-presets.js';
import { malformedInputs, type AuditRun } from './audit-run.js';

export interface LiveAuditOptions {
  readonly durationMs: number;
  readonly logger: Logger;
  /** a progress line every few seconds while the window lasts */
  readonly progress: (line: string) => void;
  /** said (always, not as progress) when stopping waits for in-flight relay requests */
  readonly notice: (line: string) => void;
}

export interface LiveAuditResult extends AuditRun {
  /** stops the sources; call after showing the report (a SIGINT meanwhile cuts in-flight relay requests off) */
  readonly finish: () => Promise<void>;
}

export async function runLiveAudit(config: ServeConfig, options: LiveAuditOptions): Promise<LiveAuditResult> {
  const state = createSentinelState(stateOptionsFor('oneShot', config));
  const daemon = createDaemon(config, { web: false, logger: options.logger, createState: () => state });
  try {
    await daemon.start();
  } catch (err) {
    await daemon.stop();
    throw new KvsentinelError('start-failed', `cannot start the sources: ${errorMessage(err)}`, { cause: err });
  }
  const owned = relayOwnershipNotices('audit', config, daemon, options.durationMs);
  if (owned !== null) options.notice(owned.start);
  const sampler = startTimelineSampler(() => state.rulesAt(Date.now()), Date.now);
  // Ctrl-C ends the window early and still reports
  await runFor({
    durationMs: options.durationMs,
    onProgress: (leftMs) =>
      options.progress(
        `kvsentinel: watching live sources: ${daemon.observations().toLocaleString('en-US')} observations, ${(leftMs / 1000).toFixed(0)} s left`,
      ),
  });
  // the report is what the window saw, taken at its end: stopping the sources afterwards (in-flight relay requests
  // finish, reads in flight are aborted) neither delays it nor changes it
  const snapshot = state.evaluate(Date.now());
  sampler.sampleNow();
  sampler.stop();
  const sources = daemon.status.list();
  const built = buildAuditReport(snapshot, {
    kind: 'live',
    description: `live sources for ${formatElapsedShort(options.durationMs)} (${sources.map((s) => s.source).join(', ')})`,
    observations: daemon.observations(),
    malformed: malformedInputs(sources),
  });
  // what sources that read fine lack (a quiet orchestrator log) goes with the report
  const sourceNotes = sources.flatMap((s) =>
    s.note !== undefined && s.note !== null ? [`${s.source}: ${s.note}`] : [],
  );
  const report = sourceNotes.length > 0 ? { ...built, notes: [...built.notes, ...sourceNotes] } : built;
  const finish = async (): Promise<void> => {
    await stopSaying(daemon, config, options.notice, 'audit');
    if (owned !== null) options.notice(owned.end);
  };
  return {
    report,
    samples: sampler.timeline.samples,
    sampleIntervalMs: sampler.timeline.intervalMs,
    input: state.diagnosisInput(snapshot.now),
    finish,
  };
}
