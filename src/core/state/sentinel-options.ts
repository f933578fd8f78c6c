// The options a state is created with: its vantage point, the rules' window and hysteresis, and the bounds of
// every cache it keeps (memory is bounded: LRU / FIFO + TTL maps with dropped counters, capped buffers and tables).
import type { HysteresisOptions } from '../diagnosis/finding-hysteresis.js';
import type { Rule } from '../diagnosis/rule.js';
import type { DiagnosisThresholds } from '../diagnosis/thresholds.js';
import { DEFAULT_MAX_TABLE_BLOCKS_PER_SERVER } from '../tables/index.js';

export type SentinelMode = 'relay' | 'watch' | 'exclusive' | 'auto';

export interface SentinelLimits {
  /** trajectories (correlation ids) remembered for turn tracking, LRU */
  readonly trajectories: number;
  /**
   * a trajectory idle this long is forgotten, ms: its next turn starts afresh (web analytics' session timeout). So
   * what turn tracking holds follows the trajectories of the last half hour, not how long the stream has run.
   */
  readonly trajectoryIdleMs: number;
  /** decisions awaiting their outcome, oldest dropped first */
  readonly pendingDecisions: number;
  /** a decision without an outcome for this long is dropped, ms */
  readonly pendingTtlMs: number;
  /** relay events per server awaiting delivery to the router */
  readonly relayBufferEvents: number;
  /** distinct sources whose health is tracked */
  readonly sources: number;
  /** blocks per server in worker truth and, separately, in the router replica (arbitrary block evicted past it) */
  readonly tableBlocksPerServer: number;
  /**
   * distinct CTX servers the state tracks (every per-server table and counter hangs off one); observations about
   * servers past it are ignored and counted. Server names from logs and the router pass through unresolved.
   */
  readonly servers: number;
}

export const DEFAULT_LIMITS: SentinelLimits = {
  trajectories: 100_000,
  trajectoryIdleMs: 30 * 60_000,
  pendingDecisions: 20_000,
  pendingTtlMs: 600_000,
  relayBufferEvents: 20_000,
  sources: 256,
  tableBlocksPerServer: DEFAULT_MAX_TABLE_BLOCKS_PER_SERVER,
  servers: 1_024,
};

export interface SentinelOptions {
  /** the vantage point; 'auto' infers relay from drained events (exclusive mode must be stated) */
  readonly mode?: SentinelMode;
  /** rules read counters over the last windowMs; null (default) = since start, as the one-shot audit wants */
  readonly windowMs?: number | null;
  /** daemon: a finding turns on after onAfter evaluations and off after offAfter; default 1/1 (one-shot) */
  readonly hysteresis?: HysteresisOptions;
  readonly thresholds?: Partial<DiagnosisThresholds>;
  readonly limits?: Partial<SentinelLimits>;
  /** override the rule set (tests) */
  readonly rules?: readonly Rule[];
}
