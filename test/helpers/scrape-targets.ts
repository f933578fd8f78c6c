// What the end-to-end alert test scrapes. A factory starts a target for a scenario and says which alerts the
// scenario must raise.
//
// HOOK FOR THE LIVE SIMULATOR: `liveSeedTargetFactory` is where `kvsentinel sim serve --preset seed` (the live
// simulated cluster, with the seed preset's faults or with the healthy configuration) and `kvsentinel serve --relay
// …` (the sidecar in relay mode in front of its CTX workers, the router pointed at the relay ports) plug in. Until
// both exist, test/ops/alert-pipeline.test.ts runs the same assertions against `syntheticTargetFactory`.
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
