// What the end-to-end alert test scrapes. A factory starts a target for a scenario and says which alerts the
// scenario must raise.
//
// HOOK FOR THE LIVE SIMULATOR: a second `TargetFactory` is where the live simulated cluster (seed preset faults, or
// the healthy configuration) and the real sidecar in relay mode (the router pointed at its relay ports) plug in;
// register it with one `alertPipelineSuite(…)` line in test/ops/alert-pipeline.test.ts. A factory for it (main's
// live cluster behind the daemon), already run on a merge with the daemon branch, is in test/ops/live-sim-target.md
// with what it found. Until the daemon is in main, the same assertions run against `syntheticTargetFactory`.
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
    close: () => exporter.close(),
  };
};
