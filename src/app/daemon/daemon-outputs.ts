// The daemon's outputs, every one reading the state's snapshots: the exporter (/metrics), the pages (the landing
// information, the live report), the live feed (/ws), the observation stream (`audit --attach`) and the web server
// that serves them.
import { Registry } from 'prom-client';
import type { Timeline } from '../../core/report/timeline.js';
import type { SentinelStateSnapshot } from '../../core/state/sentinel-state.js';
import { createExporter, type Exporter, type ReloadStatus } from '../../outputs/exporter.js';
import { renderLandingSections } from '../../outputs/landing-page.js';
import { LiveFeed } from '../../outputs/live-feed.js';
import type { ObservationStream } from '../../outputs/observation-stream.js';
import { renderLiveReportBody, renderLiveReportPage } from '../../outputs/report/live-report-page.js';
import { WebServer } from '../../outputs/web-server.js';
import type { Clock, Logger } from '../../sources/ports.js';
import type { SourceStatusBoard } from '../../sources/source-status.js';
import type { ServeConfig } from '../config/serve-config.js';
import { VERSION } from '../version.js';
import { createDaemonPages, type DaemonPages } from './daemon-pages.js';
import type { RelayEndpoint } from './daemon-sources.js';
import type { StatePort } from './daemon.js';
import { createObservationStream } from './observation-stream-wiring.js';

export interface DaemonOutputsDeps {
  readonly state: StatePort;
  readonly status: SourceStatusBoard;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly config: () => ServeConfig;
  readonly startedAt: number;
  readonly revision: string | undefined;
  readonly reportDescription: (() => string) | undefined;
  /** observations the daemon applied so far */
  readonly observations: () => number;
  /** the sidecar's own counters observed now (a scrape sees them as they are, as it sees the state's) */
  readonly observeSidecarStats: () => void;
  readonly reloadStatus: () => ReloadStatus;
  readonly timeline: () => Timeline | undefined;
  readonly relays: () => readonly RelayEndpoint[];
  readonly ready: () => boolean;
  readonly reload: () => Promise<void>;
}

export interface DaemonOutputs {
  readonly exporter: Exporter;
  readonly pages: DaemonPages;
  readonly feed: LiveFeed;
  readonly observationStream: ObservationStream | null;
  readonly web: WebServer;
}

export function createDaemonOutputs(deps: DaemonOutputsDeps): DaemonOutputs {
  const { state, status, clock, logger } = deps;
  const snapshot = (): SentinelStateSnapshot => state.snapshot(clock());
  const exporter = createExporter({
    registry: new Registry(),
    sources: () => status.list(),
    snapshot: () => {
      deps.observeSidecarStats();
      return snapshot();
    },
    reload: deps.reloadStatus,
    build: { version: VERSION, revision: deps.revision ?? 'unknown', nodejsVersion: process.version },
    logger,
  });
  let web: WebServer | null = null;
  const pages = createDaemonPages({
    state,
    status,
    clock,
    logger,
    startedAt: deps.startedAt,
    observations: deps.observations,
    timeline: deps.timeline,
    relays: deps.relays,
    selfUrl: () => web?.selfUrl(),
    ...(deps.reportDescription !== undefined ? { description: deps.reportDescription } : {}),
  });
  const landingSections = (): string => renderLandingSections(pages.landingInfo());
  const feed = new LiveFeed({
    snapshot,
    clock,
    logger,
    version: VERSION,
    report: () => renderLiveReportBody(pages.reportModel(), landingSections()),
  });
  // the one-shot audit's way in that owns no port of the data path (`audit --attach`, `record --attach`)
  const observationStream = createObservationStream(state, { config: deps.config, status, clock, logger });
  web = new WebServer({
    exporter,
    feed,
    ...(observationStream !== null ? { observations: observationStream } : {}),
    landing: () => pages.landingInfo(),
    page: () => renderLiveReportPage(pages.reportModel(), landingSections()),
    ready: deps.ready,
    reload: deps.reload,
    bearerToken: () => deps.config().bearerToken,
    logger,
  });
  return { exporter, pages, feed, observationStream, web };
}
