// `kvsentinel audit` with the daemon's source flags: run the sources (relay ports included) for --duration into a
// one-shot state (counters since start, findings without hysteresis), then report like an offline audit.
import type { Command } from 'commander';
import { buildAuditReport } from '../../core/diagnosis/audit-report.js';
import { createSentinelState } from '../../core/state/sentinel-state.js';
import { CliError } from '../cli-error.js';
import type { AuditRun } from '../commands/audit.js';
import { ConfigError, parseDuration } from './config.js';
import { createDaemon } from './daemon.js';
import { createStderrLogger } from './logger.js';
import { startTimelineSampler } from './timeline-sampler.js';
import { addSourceOptions, hasSources, loadCliConfig, NO_SOURCE_MESSAGE, sourceFlags } from './source-flags.js';

export const liveAudit = {
  addOptions(command: Command): void {
    addSourceOptions(command).option('--duration <duration>', 'how long to watch live sources (e.g. 30s, 5m)', '30s');
  },

  async run(_command: Command, options: Record<string, unknown>, progress: (line: string) => void): Promise<LiveAuditResult> {
    const config = await loadCliConfig(sourceFlags(options));
    if (!hasSources(config)) throw new CliError(`give --bundle DIR or live sources (${NO_SOURCE_MESSAGE.replace('no source configured: give ', '')})`);
    let durationMs: number;
    try {
      durationMs = parseDuration('--duration', options['duration']);
    } catch (err) {
      if (err instanceof ConfigError) throw new CliError(err.message);
      throw err;
    }
    const state = createSentinelState({ mode: config.ctx.some((c) => c.events === 'exclusive') ? 'exclusive' : 'auto', windowMs: null, limits: { tableBlocksPerServer: config.state.maxTableBlocks } });
    let observations = 0;
    const daemon = createDaemon(config, {
      web: false,
      logger: createStderrLogger({ level: 'warn' }),
      createState: () => ({
        apply(o) {
          observations++;
          state.apply(o);
        },
        snapshot: (now) => state.snapshot(now),
        subscribe: (listener) => state.subscribe(listener),
      }),
    });
    try {
      await daemon.start();
    } catch (err) {
      await daemon.stop();
      throw new CliError(`cannot start the sources: ${err instanceof Error ? err.message : String(err)}`);
    }
    const started = Date.now();
    const sampler = startTimelineSampler(() => state.peek(Date.now()), Date.now);
    await new Promise<void>((resolve) => {
      const tick = setInterval(() => {
        const left = Math.max(0, durationMs - (Date.now() - started));
        progress(`kvsentinel: watching live sources: ${observations.toLocaleString('en-US')} observations, ${(left / 1000).toFixed(0)} s left`);
      }, 5_000);
      const done = (): void => {
        clearInterval(tick);
        clearTimeout(timer);
        process.off('SIGINT', done);
        resolve();
      };
      const timer = setTimeout(done, durationMs);
      process.once('SIGINT', done); // Ctrl-C ends the window early and still reports
    });
    // the report is what the window saw, taken at its end: stopping the sources afterwards (in-flight relay requests
    // finish, reads in flight are aborted) neither delays it nor changes it
    const snapshot = state.snapshot(Date.now());
    sampler.sampleNow();
    sampler.stop();
    const malformed = daemon.status.list().reduce((n, s) => n + Object.values(s.badInput).reduce((a, b) => a + b, 0), 0);
    const sources = daemon.status.list().map((s) => s.source);
    const built = buildAuditReport(snapshot, {
      kind: 'live',
      description: `live sources for ${(durationMs / 1000).toFixed(0)} s (${sources.join(', ')})`,
      observations,
      malformed,
    });
    // what sources that read fine lack (a quiet orchestrator log) goes with the report
    const sourceNotes = daemon.status.list().flatMap((s) => (s.note !== undefined && s.note !== null ? [`${s.source}: ${s.note}`] : []));
    const report = sourceNotes.length > 0 ? { ...built, notes: [...built.notes, ...sourceNotes] } : built;
    const finish = async (): Promise<void> => {
      const hurry = (): void => daemon.hurry(); // Ctrl-C: do not wait for in-flight relay requests
      process.once('SIGINT', hurry);
      const inFlight = daemon.inFlightRelayRequests();
      if (inFlight > 0) {
        // always said (not a progress line): the exit waits for these
        process.stderr.write(`kvsentinel: report done; letting ${inFlight} in-flight relay requests finish (up to relay.shutdown_grace ${config.relay.shutdownGraceMs / 1000} s; Ctrl-C to stop now)\n`);
      }
      await daemon.stop();
      process.off('SIGINT', hurry);
    };
    return { report, samples: sampler.timeline.samples, sampleIntervalMs: sampler.timeline.intervalMs, input: state.diagnosisInput(snapshot.now), finish };
  },
};

export interface LiveAuditResult extends AuditRun {
  /** stops the sources; call after printing the report */
  readonly finish: () => Promise<void>;
}
