// What the daemon's pages show: the landing information (verdict, findings, sources, relays and their consumers)
// and the live report's model (the last evaluation, the sampled timeline, the inferred configuration).
import { buildAuditReport } from '../../core/report/audit-report.js';
import { buildReportModel, type ReportModel } from '../../core/report/report-model.js';
import type { Timeline } from '../../core/report/timeline.js';
import type { SentinelStateSnapshot } from '../../core/state/sentinel-state.js';
import type { LandingInfo } from '../../outputs/landing-page.js';
import { formatDateTime } from '../../outputs/time-text.js';
import type { Clock, Logger } from '../../sources/ports.js';
import type { SourceStatusBoard } from '../../sources/source-status.js';
import { malformedInputs } from '../audit/audit-run.js';
import { VERSION } from '../version.js';
import type { StatePort } from './daemon.js';
import type { RelayEndpoint } from './daemon-sources.js';

export interface DaemonPagesDeps {
  readonly state: StatePort;
  readonly status: SourceStatusBoard;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly startedAt: number;
  /** observations the daemon applied so far */
  readonly observations: () => number;
  readonly timeline: () => Timeline | undefined;
  readonly relays: () => readonly RelayEndpoint[];
  /** how people reach this sidecar; throws or is undefined when not listening (a live audit has no web server) */
  readonly selfUrl: () => string | undefined;
  /** what the live report says it watches (default: the daemon's sources since it started) */
  readonly description?: () => string;
}

export interface DaemonPages {
  landingInfo(): LandingInfo;
  reportModel(): ReportModel;
}

export function createDaemonPages(deps: DaemonPagesDeps): DaemonPages {
  const { state, status, clock, logger } = deps;
  return {
    landingInfo() {
      let s: SentinelStateSnapshot | null = null;
      try {
        s = state.snapshot(clock());
      } catch (err) {
        logger.error('snapshot failed', { error: String(err) });
      }
      let self: string | undefined;
      try {
        self = deps.selfUrl();
      } catch {
        self = undefined; // not listening
      }
      return {
        version: VERSION,
        ...(self !== undefined ? { self } : {}),
        verdict: s?.verdict ?? null,
        findings: s?.findings ?? [],
        sources: status.list(),
        relays: deps.relays().map((r) => {
          const a = r.address();
          const consumers = r.bufferStats().consumers.map((c) => ({
            consumer: c.consumer,
            backlog: c.backlog,
            delivered: c.delivered,
            dropped: c.dropped,
          }));
          return { id: r.target.id, listen: `${a.host}:${a.port}`, upstream: r.target.upstream, consumers };
        }),
      };
    },
    reportModel() {
      const now = clock();
      // one evaluation for the whole page: headline, findings and the inferred configuration
      const snap = state.lastEvaluation() ?? state.snapshot(now);
      const sources = status.list();
      const audit = buildAuditReport(snap, {
        kind: 'live',
        description:
          deps.description?.() ??
          `kvsentinel serve: ${sources.map((s) => s.source).join(', ') || 'no sources'}, since ${formatDateTime(deps.startedAt)}`,
        observations: deps.observations(),
        malformed: malformedInputs(sources),
      });
      const timeline = deps.timeline();
      return buildReportModel({
        version: VERSION,
        generatedAt: now,
        audit,
        samples: timeline?.samples ?? [],
        sampleIntervalMs: timeline?.intervalMs ?? null,
        input: state.diagnosisInput?.(snap.now) ?? null,
      });
    },
  };
}
