// What the end-to-end alert test scrapes. A factory starts a target for a scenario and says which alerts the
// scenario must raise.
//
// Two factories: `syntheticTargetFactory` (an exporter generated from the metric catalog: every family and label) and
// `liveSimTargetFactory` in live-sim-target.ts (the live simulated cluster behind the real sidecar in relay mode);
// test/ops/alert-pipeline.test.ts runs the same assertions against both.
import { HEALTHY, SEED_LIKE, startSyntheticExporter } from './synthetic-exporter.js';

export type Scenario = 'seed' | 'healthy';

export interface ScrapeTarget {
  /** host:port serving /metrics, scraped as job="kvsentinel". */
  readonly address: string;
  /** Critical alerts the scenario must deliver besides KvCacheSignalInert (its cause); [] for healthy. */
  readonly causeAlerts: readonly string[];
  /**
   * Dashboard panels (by title) allowed to show no data in this scenario, each with the reason: e.g. per-rank event
   * panels when the fault is "events off", error panels in a clean run. Every other panel must return series.
   */
  readonly mayBeEmpty: ReadonlyMap<string, string>;
  /**
   * Requests the target must have counted (Σ kvsentinel_requests_total) before "no critical alert" means anything:
   * enough for the statistical rules to have evaluated (0: the target's findings do not depend on traffic).
   */
  readonly minRequests: number;
  close(): Promise<void>;
}

export type TargetFactory = (scenario: Scenario) => Promise<ScrapeTarget>;

export const syntheticTargetFactory: TargetFactory = async (scenario) => {
  const exporter = await startSyntheticExporter(scenario === 'seed' ? SEED_LIKE : HEALTHY);
  return {
    address: exporter.address,
    causeAlerts: scenario === 'seed' ? ['KvEventsAbsent', 'KvTokensPerBlockMismatch'] : [],
    // The synthetic exporter exposes every family with every label set: every panel has data.
    mayBeEmpty: new Map(),
    minRequests: 0,
    close: () => exporter.close(),
  };
};
