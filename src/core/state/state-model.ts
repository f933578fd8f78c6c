// What the state's reducers share: the counters, worker truth and the router replica, the event-sequence trackers,
// the deployment's facts and the event paths, each a component with its own methods. What one reducer alone keeps
// it owns itself; projections read both; nothing here runs a rule or knows an output.
import type { DiagnosisInput } from '../diagnosis/rule.js';
import type { DiagnosisThresholds } from '../diagnosis/thresholds.js';
import { EventSequenceTracker, RouterReplicaTable, WorkerTruthTable } from '../tables/index.js';
import { DEFAULT_ROUTER_TOKENS_PER_BLOCK } from '../diagnosis/router-defaults.js';
import { inferredRouterBlockSize, routerChunkSize, type RouterBlockSize } from '../diagnosis/router-block-size.js';
import { DeploymentFacts } from './deployment-facts.js';
import { DEFAULT_INCREMENTAL_TRAJECTORIES, ObservationDigester } from './observation-digester.js';
import { EventPaths } from './event-paths.js';
import { PullEventWatch } from './pull-event-watch.js';
import { RelayBuffer } from './relay-buffer.js';
import { RouterBlockSizeInference } from './router-block-size-inference.js';
import type { SentinelLimits, SentinelMode } from './sentinel-options.js';
import { SidecarLoadLedger } from './sidecar-load-ledger.js';
import { StateCounters } from './state-counters.js';
import { StreamHistory } from './stream-history.js';
import { WorkerCapacity } from './worker-capacity.js';

export class StateModel {
  /** the router's settings and the servers' hashing, as the deployment states or shows them */
  readonly deployment = new DeploymentFacts();
  /** block keys and hash checks from the observations' tokens, with the deployment's facts */
  readonly digester = new ObservationDigester(DEFAULT_INCREMENTAL_TRAJECTORIES, this.deployment);
  readonly counters: StateCounters;
  readonly truth: WorkerTruthTable;
  readonly replica: RouterReplicaTable;
  readonly sequence = new EventSequenceTracker();
  /** what each worker can hold and what it stored: the sticky ideal's bound */
  readonly capacity = new WorkerCapacity();
  /** whether each server's pull path still brings its events */
  readonly pullEvents = new PullEventWatch();
  /** the sidecar's own lag and the gaps it explains */
  readonly sidecarLoad = new SidecarLoadLedger();
  /** history ZMQ subscriptions joined too late to replay, until each table has turned over */
  readonly history = new StreamHistory();
  /** the router's tokens_per_block from its behaviour, while no source states it */
  readonly tpbInference = new RouterBlockSizeInference();
  /** relay events per server awaiting the router's poll, to enter the replica as the router reads them */
  readonly #relay = new Map<string, RelayBuffer>();
  /** by which path each server's events come: streams, the pull path */
  readonly paths = new EventPaths();

  readonly mode: SentinelMode;
  readonly thresholds: DiagnosisThresholds;
  readonly limits: SentinelLimits;

  constructor(mode: SentinelMode, thresholds: DiagnosisThresholds, limits: SentinelLimits, windowMs: number | null) {
    this.mode = mode;
    this.thresholds = thresholds;
    this.limits = limits;
    this.counters = new StateCounters(windowMs);
    this.truth = new WorkerTruthTable({ maxBlocksPerServer: limits.tableBlocksPerServer });
    this.replica = new RouterReplicaTable({ maxBlocksPerServer: limits.tableBlocksPerServer });
  }

  relayOf(server: string): RelayBuffer {
    let buffer = this.#relay.get(server);
    if (!buffer) {
      buffer = new RelayBuffer(this.limits.relayBufferEvents);
      this.#relay.set(server, buffer);
    }
    return buffer;
  }

  relayBuffers(): IterableIterator<RelayBuffer> {
    return this.#relay.values();
  }

  get seesWorkerEvents(): boolean {
    return this.paths.seesWorkerEvents(this.mode);
  }

  /** The router's chunk size as far as known: stated, else inferred, else the default. */
  routerChunkSize(): number {
    return routerChunkSize(this.routerBlockSize());
  }

  /** The router's tokens_per_block: stated by a source, else inferred from its routing; null while unknown. */
  routerBlockSize(): RouterBlockSize | null {
    const inferred = this.tpbInference.inferred;
    return this.deployment.router.blockSize ?? (inferred !== null ? inferredRouterBlockSize(inferred) : null);
  }

  /** `candidates`: the chunk sizes the decisions considered while the router's is unknown */
  routerTokensPerBlock(
    candidates: readonly number[],
  ): Pick<DiagnosisInput['router'], 'blockSize' | 'tokensPerBlockCandidates'> {
    const blockSize = this.routerBlockSize();
    if (blockSize !== null) return { blockSize, tokensPerBlockCandidates: [] };
    const considered = candidates.length > 0 ? candidates : [DEFAULT_ROUTER_TOKENS_PER_BLOCK];
    return { blockSize: null, tokensPerBlockCandidates: [...considered].sort((a, b) => a - b) };
  }

  /**
   * The router fills its own table on finish: backfill_block_hashes_on_finish, or the newest router's
   * track_routed_blocks (on unless stated off). Null while neither is known.
   */
  fillsOwnTable(): boolean | null {
    const r = this.deployment.router;
    // the newest router has no backfill (tracking replaced it); the 2026-06 one's is opt-in
    const backfill = r.backfillBlockHashesOnFinish ?? (r.profile !== null ? false : null);
    const tracking = r.trackRoutedBlocks ?? (r.profile === 'newest' ? true : r.profile === '2026-06' ? false : null);
    if (backfill === true || tracking === true) return true;
    return backfill === false && tracking === false ? false : null;
  }
}
