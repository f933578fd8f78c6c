// The sidecar's one state: fed observations (apply), read through snapshots (snapshot). It holds worker truth and
// the router replica, event-sequence trackers, the per-decision joins (docs/design.md §4), per-trajectory turn tracking,
// windowed counters, and runs the rules (docs/design.md §5) with hysteresis. Pure: `now` is a parameter, no I/O.
// Memory is bounded: trajectories and pending decisions are capped maps (LRU / FIFO + TTL) with dropped counters,
// the relay buffer is capped per server, and counters live in a fixed ring of time buckets.
import { FINDING_CATALOG, severityRank } from '../diagnosis/finding-catalog.js';
import { FindingHysteresis, type HysteresisOptions } from '../diagnosis/finding-hysteresis.js';
import type {
  DecisionDiagnosis,
  DiagnosisInput,
  RankDiagnosis,
  RouterStateView,
  Rule,
  ServerDiagnosis,
  SourceDiagnosis,
} from '../diagnosis/rule.js';
import { RULES } from '../diagnosis/rules/index.js';
import { runRules } from '../diagnosis/run-rules.js';
import { DEFAULT_THRESHOLDS, type DiagnosisThresholds } from '../diagnosis/thresholds.js';
import { classifyPreference, type PreferenceSample, type PreferenceTally } from '../diagnosis/holder-preference.js';
import type {
  DecisionObservation,
  Observation,
  OutcomeObservation,
  RouterPollObservation,
  RouterScoreObservation,
  RouterServerFactObservation,
  StreamSequenceObservation,
  WorkerEventsObservation,
} from '../observe/observation.js';
import { DEFAULT_MAX_TABLE_BLOCKS_PER_SERVER, EventSequenceTracker, RouterReplicaTable, WorkerTruthTable } from '../tables/index.js';
import type { HashAlgo } from '../wire/kv-event.js';
import type { StreamOrigin } from '../stream/stream-engine.js';
import type { StoredEventCheck } from './hash-verifier.js';
import { LruMap } from './lru-map.js';
import {
  DEFAULT_ROUTER_MAX_BATCH_SIZE,
  DEFAULT_ROUTER_TOKENS_PER_BLOCK,
  NEWEST_LOAD_WEIGHT,
  keysAtBlockSize,
  ObservationDigester,
  workerKeyId,
  workerKeySizes,
  type DecisionKeys,
  type ObservationDigest,
} from './observation-digester.js';
import { RouterBlockSizeInference } from './router-block-size-inference.js';
import { workerTokenOracle } from './worker-token-oracle.js';
import { REQUEST_UNREADABLE_REASONS, type RequestUnreadableReason } from '../relay/request-unreadable.js';
import { RelayBuffer, type CompactEvent } from './relay-buffer.js';
import { JoinedEventStream, type DecisionJoin, type JoinedEventListener, type OutcomeJoin } from './joined-events.js';
import type { DecisionStats, Finding, RankStats, ServerStats, SentinelSnapshot, Verdict } from './snapshot.js';
import { RenderParity } from './render-parity.js';
import { WindowedCounters } from './windowed-counters.js';

export type SentinelMode = 'relay' | 'watch' | 'exclusive' | 'auto';

export interface SentinelLimits {
  /** trajectories (correlation ids) remembered for turn tracking, LRU */
  readonly trajectories: number;
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
  pendingDecisions: 20_000,
  pendingTtlMs: 600_000,
  relayBufferEvents: 20_000,
  sources: 256,
  tableBlocksPerServer: DEFAULT_MAX_TABLE_BLOCKS_PER_SERVER,
  servers: 1_024,
};

/**
 * What the daemon should run with: rules over the last 5 minutes, evaluated at most every 5 s, a finding on after
 * 3 consecutive evaluations (15 s) and off after 12 (1 min), so fixes show and nothing flaps.
 */
export const DAEMON_STATE_OPTIONS = {
  mode: 'relay',
  windowMs: 300_000,
  evaluateEveryMs: 5_000,
  hysteresis: { onAfter: 3, offAfter: 12 },
} as const satisfies SentinelOptions;

export interface SentinelOptions {
  /** the vantage point; 'auto' infers relay from drained events (exclusive mode must be stated) */
  readonly mode?: SentinelMode;
  /** rules read counters over the last windowMs; null (default) = since start, as the one-shot audit wants */
  readonly windowMs?: number | null;
  /** daemon: a finding turns on after onAfter evaluations and off after offAfter; default 1/1 (one-shot) */
  readonly hysteresis?: HysteresisOptions;
  /** snapshot() re-evaluates the rules at most this often, ms; default 0 (every snapshot) */
  readonly evaluateEveryMs?: number;
  readonly thresholds?: Partial<DiagnosisThresholds>;
  readonly limits?: Partial<SentinelLimits>;
  /** override the rule set (tests) */
  readonly rules?: readonly Rule[];
}

/** The snapshot contract plus what the state alone knows (compatible extension of SentinelSnapshot). */
export interface SentinelStateSnapshot extends SentinelSnapshot {
  readonly window: { readonly from: number; readonly to: number } | null;
  /** (oracle − realised cached tokens) per second over the window; null without an oracle */
  readonly tokensLostPerSecond: number | null;
  readonly oracleBasis: 'worker-truth' | 'sticky-ideal' | null;
  /** the router's tokens_per_block: stated (from = the source), inferred from its routing (from = 'inferred'), or unknown */
  readonly routerTokensPerBlock: { readonly value: number | null; readonly from: string | null; readonly candidates: readonly number[] };
  /** share of follow-up turns that went back to their previous server; null before any */
  readonly stickiness: number | null;
  readonly ruleErrors: number;
  /** servers whose events came from a ZMQ stream, with the engine and how its hashes entered the tables */
  readonly eventStreams: readonly { readonly server: string; readonly engine: string; readonly hashes: 'native' | 'rekeyed'; readonly vllmHashing: StreamOrigin['vllmHashing'] | null }[];
}

export interface SentinelState {
  /** Applies one observation; `digest` is given when it was computed at record time (bundles). */
  apply(obs: Observation, digest?: ObservationDigest | null): void;
  snapshot(now: number): SentinelStateSnapshot;
  /**
   * The snapshot as the rules read the state at `now`, without changing it: no hysteresis step, no evaluation
   * recorded, no rule error counted; findings are the rules' hits (since = now). The report's timeline samples
   * it, so sampling a one-shot audit cannot change its result.
   */
  peek(now: number): SentinelStateSnapshot;
  /** What the rules would read at `now` (tests, debugging). */
  diagnosisInput(now: number): DiagnosisInput;
  /** Every decision and outcome applied from now on, joined (the live feed); returns the unsubscribe. */
  subscribe(listener: JoinedEventListener): () => void;
  readonly digester: ObservationDigester;
}

interface PendingDecision {
  readonly ts: number;
  readonly server: string;
  readonly correlationId: string | null;
  /** the request carried no token count (text, chat, unreadable): the outcome's usage gives the trajectory's */
  readonly countFromOutcome: boolean;
  readonly followup: boolean;
  /** went back to the previous turn's server (null for first turns) */
  readonly sticky: boolean | null;
  readonly prevPromptTokens: number | null;
  readonly hasKeys: boolean;
  readonly oracleBestTokens: number;
  readonly oracleChosenTokens: number;
  readonly blockSize: number;
  /** router keys for backfill-on-finish (one chain per candidate chunk size), kept only when the router backfills */
  readonly backfillKeys: readonly BigUint64Array[] | null;
  readonly backfillAlgo: HashAlgo;
}

interface Trajectory {
  lastServer: string;
  lastPromptTokens: number | null;
  turns: number;
}

interface ServerTotals {
  requests: number;
  failures: number;
  promptTokens: number;
  cachedTokens: number;
  oracleCachedTokens: number;
  predictedRouterCachedTokens: number;
  routerPolls: number;
  eventsDelivered: number;
  eventsDropped: number;
  hashMatch: number;
  hashMismatch: number;
  hashUnverifiable: number;
  /** CTX requests whose body the relay could not read (any reason) */
  unreadableRequests: number;
  inflight: number;
  alternativeAlgo: HashAlgo | null;
  routerState: RouterStateView | null;
  /** the newest router logged that it skips polling this server (tokens_per_block mismatch) */
  pollingSkipped: ServerDiagnosis['pollingSkipped'];
  /** the last EVENT_MATCH_DIAG block counts */
  eventBlocks: number | null;
  totalBlocks: number | null;
}

interface SourceTrack {
  up: boolean;
  error: string | null;
  downSince: number | null;
  lastFailure: number | null;
  failures: number;
}

const ROUTERS_WITHOUT_EVENTS = ['conversation', 'round_robin', 'load_balancing'];

function routerConsumesEvents(type: string | null): boolean {
  if (type === null) return true;
  const t = type.toLowerCase().replace(/[-\s]/g, '_');
  return !ROUTERS_WITHOUT_EVENTS.some((name) => t.includes(name));
}

function emptyTotals(): ServerTotals {
  return {
    requests: 0,
    failures: 0,
    promptTokens: 0,
    cachedTokens: 0,
    oracleCachedTokens: 0,
    predictedRouterCachedTokens: 0,
    routerPolls: 0,
    eventsDelivered: 0,
    eventsDropped: 0,
    hashMatch: 0,
    hashMismatch: 0,
    hashUnverifiable: 0,
    unreadableRequests: 0,
    inflight: 0,
    alternativeAlgo: null,
    routerState: null,
    pollingSkipped: null,
    eventBlocks: null,
    totalBlocks: null,
  };
}

/**
 * `pending`: warnings and criticals that hold in the latest evaluation but have not turned on yet (hysteresis).
 * While inert or insufficient evidence is pending, or anything is pending on an otherwise clean slate, the verdict
 * is `unknown`: neither "routing follows prefixes" (degraded) nor an all-clear is shown yet.
 */
export function verdictOf(findings: readonly Finding[], pending: ReadonlySet<string> = new Set()): Verdict {
  if (findings.some((f) => f.id === 'cache-signal-inert')) return 'inert';
  // no all-clear (and no "the cache signal works") without evidence
  if (findings.some((f) => f.id === 'evidence-insufficient') || pending.has('cache-signal-inert') || pending.has('evidence-insufficient')) return 'unknown';
  if (findings.some((f) => severityRank(f.severity) >= severityRank('warning'))) return 'degraded';
  return pending.size > 0 ? 'unknown' : 'healthy';
}

export function createSentinelState(options: SentinelOptions = {}): SentinelState {
  return new Sentinel(options);
}

class Sentinel implements SentinelState {
  readonly digester = new ObservationDigester();
  readonly #mode: SentinelMode;
  readonly #thresholds: DiagnosisThresholds;
  readonly #limits: SentinelLimits;
  readonly #rules: readonly Rule[];
  readonly #hysteresis: FindingHysteresis;
  readonly #evaluateEveryMs: number;
  readonly #joined = new JoinedEventStream();
  readonly #truth: WorkerTruthTable;
  readonly #replica: RouterReplicaTable;
  readonly #sequence = new EventSequenceTracker();
  readonly #win: WindowedCounters;
  readonly #all: WindowedCounters;
  readonly #servers = new Map<string, ServerTotals>();
  readonly #relay = new Map<string, RelayBuffer>();
  readonly #trajectories: LruMap<string, Trajectory>;
  readonly #pending: LruMap<string, PendingDecision>;
  /** requestId → our replica predicted a match somewhere / the router reported one (joins router-score) */
  readonly #predictions: LruMap<string, boolean>;
  readonly #reportedScores: LruMap<string, boolean>;
  readonly #sources = new Map<string, SourceTrack>();
  readonly #decisionServers = new Set<string>();
  /** servers admitted under limits.servers */
  readonly #admitted = new Set<string>();
  #serverObservationsIgnored = 0;
  /** the router's tokens_per_block from its behaviour, while no source states it */
  readonly #tpbInference = new RouterBlockSizeInference();
  readonly #render: RenderParity;
  /** the chunk sizes last considered while the router's is unknown */
  #tpbCandidates: readonly number[] = [];
  #sawDrain = false;
  /** a ZMQ stream source is subscribed (or delivered): worker events are seen without drains */
  #sawStream = false;
  readonly #streamServers = new Set<string>();
  readonly #replicaStreamed = new Set<string>();
  /** servers whose pull path the sidecar drains or the router polls: the router's table comes from there */
  readonly #pullServers = new Set<string>();
  readonly #streamOrigins = new Map<string, NonNullable<WorkerEventsObservation['stream']>>();
  /** a stored event was seen: worker truth can say where a prefix was */
  #truthSeen = false;
  #sawRouterPoll = false;
  #sawRouterDebug = false;
  #pendingExpired = 0;
  #sourcesIgnored = 0;
  #orphanOutcomes = 0;
  #ruleErrors = 0;
  #lastEvaluation: number | null = null;
  #findings: Finding[] = [];
  /** warnings and criticals that hold in the latest evaluation but have not turned on yet (hysteresis) */
  #pendingFindings: ReadonlySet<string> = new Set();

  constructor(options: SentinelOptions) {
    this.#mode = options.mode ?? 'auto';
    this.#thresholds = { ...DEFAULT_THRESHOLDS, ...options.thresholds };
    this.#limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.#rules = options.rules ?? RULES;
    this.#hysteresis = new FindingHysteresis(options.hysteresis ?? { onAfter: 1, offAfter: 1 });
    this.#evaluateEveryMs = options.evaluateEveryMs ?? 0;
    const windowMs = options.windowMs ?? null;
    this.#all = new WindowedCounters({ windowMs: null });
    this.#win = windowMs === null ? this.#all : new WindowedCounters({ windowMs });
    this.#render = new RenderParity(windowMs);
    this.#truth = new WorkerTruthTable({ maxBlocksPerServer: this.#limits.tableBlocksPerServer });
    this.#replica = new RouterReplicaTable({ maxBlocksPerServer: this.#limits.tableBlocksPerServer });
    this.#trajectories = new LruMap(this.#limits.trajectories);
    this.#pending = new LruMap(this.#limits.pendingDecisions);
    this.#predictions = new LruMap(this.#limits.pendingDecisions);
    this.#reportedScores = new LruMap(this.#limits.pendingDecisions);
  }

  apply(observation: Observation, digest?: ObservationDigest | null): void {
    const obs = this.#withinServerCap(observation);
    if (obs === null) {
      this.#serverObservationsIgnored++;
      return;
    }
    const d = digest !== undefined ? digest : this.digester.digest(obs);
    this.digester.observe(obs, d);
    this.#expirePending(obs.ts);
    switch (obs.kind) {
      case 'worker-events':
        this.#workerEvents(obs, d?.kind === 'worker-events' ? d.digest.stored : null);
        return;
      case 'stream-sequence':
        this.#streamSequence(obs);
        return;
      case 'router-poll':
        this.#routerPoll(obs);
        return;
      case 'decision': {
        const join = this.#decision(obs, d?.kind === 'decision' ? d.keys : null);
        if (join !== null) this.#joined.publish({ kind: 'decision', observation: obs, join });
        return;
      }
      case 'outcome': {
        const join = this.#outcome(obs, d?.kind === 'outcome' ? d.keys : null);
        if (this.#joined.active) this.#joined.publish({ kind: 'outcome', observation: obs, join });
        return;
      }
      case 'render-check':
        this.#render.observe(obs, this.digester.router.tokensPerBlock ?? this.#tpbInference.inferred ?? DEFAULT_ROUTER_TOKENS_PER_BLOCK);
        return;
      case 'router-state': {
        this.#sawRouterDebug = true;
        this.#totals(obs.server).routerState = {
          ts: obs.ts,
          blockTableSize: obs.blockTableSize,
          activeRequests: obs.activeRequests,
          polls: obs.polls,
          pollFailures: obs.pollFailures,
        };
        return;
      }
      case 'router-score':
        this.#routerScore(obs);
        return;
      case 'poll-failure':
        this.#count(obs.ts, `pollfail|${obs.server}`);
        return;
      case 'router-server-fact':
        this.#routerServerFact(obs);
        return;
      case 'source-health':
        this.#sourceHealth(obs.ts, obs.source, obs.up, obs.error);
        return;
      case 'server-info':
      case 'router-config':
        for (const server of obs.kind === 'router-config' ? (obs.servers ?? []) : [obs.server]) this.#totals(server);
        return;
    }
  }

  #admit(server: string): boolean {
    if (this.#admitted.has(server)) return true;
    if (this.#admitted.size >= this.#limits.servers) return false;
    this.#admitted.add(server);
    return true;
  }

  /** The observation as far as it concerns admitted servers; null when it is about a server past the cap. */
  #withinServerCap(obs: Observation): Observation | null {
    switch (obs.kind) {
      case 'source-health':
        return obs;
      case 'router-config':
        return obs.servers === null || obs.servers.every((s) => this.#admit(s)) ? obs : { ...obs, servers: obs.servers.filter((s) => this.#admitted.has(s)) };
      case 'router-score':
        return this.#admit(obs.chosen) && obs.candidates.every((c) => this.#admit(c.server)) ? obs : null;
      case 'decision':
        if (!this.#admit(obs.server)) return null;
        if (obs.inflight === null || Object.keys(obs.inflight).every((s) => this.#admit(s))) return obs;
        return { ...obs, inflight: Object.fromEntries(Object.entries(obs.inflight).filter(([s]) => this.#admitted.has(s))) };
      case 'worker-events':
      case 'stream-sequence':
      case 'router-poll':
      case 'outcome':
      case 'render-check':
      case 'server-info':
      case 'router-state':
      case 'poll-failure':
      case 'router-server-fact':
        return this.#admit(obs.server) ? obs : null;
    }
  }

  #count(ts: number, key: string, amount = 1): void {
    this.#all.add(ts, key, amount);
    if (this.#win !== this.#all) this.#win.add(ts, key, amount);
  }

  #max(ts: number, key: string, value: number): void {
    this.#all.max(ts, key, value);
    if (this.#win !== this.#all) this.#win.max(ts, key, value);
  }

  #totals(server: string): ServerTotals {
    let t = this.#servers.get(server);
    if (!t) {
      t = emptyTotals();
      this.#servers.set(server, t);
    }
    return t;
  }

  #vllmHashingOf(server: string): { readonly algo: string; readonly seedKnown: boolean } | null {
    const hashing = this.#streamOrigins.get(server)?.vllmHashing;
    return hashing !== undefined && hashing.algo === 'sha256_cbor' ? { algo: hashing.algo, seedKnown: hashing.seedKnown } : null;
  }

  #relayOf(server: string): RelayBuffer {
    let buffer = this.#relay.get(server);
    if (!buffer) {
      buffer = new RelayBuffer(this.#limits.relayBufferEvents);
      this.#relay.set(server, buffer);
    }
    return buffer;
  }

  #workerEvents(obs: WorkerEventsObservation, checks: readonly (StoredEventCheck | null)[] | null): void {
    const server = obs.server;
    const totals = this.#totals(server);
    const streamed = obs.stream !== undefined;
    if (streamed) {
      this.#sawStream = true;
      if (!this.#streamOrigins.has(server)) this.#streamOrigins.set(server, obs.stream);
      this.#count(obs.ts, `sev|${server}`, obs.events.length);
    } else {
      this.#sawDrain = true;
      // a drain proves the relay reads its worker again, even from a source that reports only its failures
      const relaySource = this.#sources.get(`relay:${server}`);
      if (relaySource !== undefined && !relaySource.up) this.#sourceHealth(obs.ts, `relay:${server}`, true, null);
      this.#count(obs.ts, `drain|${server}`);
      if (obs.events.length === 0) this.#count(obs.ts, `drain0|${server}`);
    }
    // a stream reaches every subscriber: a router that reads it (rather than a pull path it polls) holds the same
    if (!streamed) this.#pullServers.add(server);
    const replicaFromStream = streamed && !this.#pullServers.has(server);
    const firstEvent = obs.events[0];
    if (replicaFromStream && firstEvent !== undefined && !this.#replicaStreamed.has(server)) {
      // a stream has no `created` event: name the algorithm the replica's block count reads
      this.#replicaStreamed.add(server);
      this.#replica.apply(server, { ...firstEvent, data: { type: 'created', numBlocksPerCacheLevel: [] } });
    }
    const relay = this.#relayOf(server);
    // per-event counters are summed over the observation (all at obs.ts) and added once: a drain carries thousands
    // of events, and a counter key is a fresh string to hash on every add
    const events = obs.events;
    const perRank = new Map<number, { events: number; stated: number }>();
    let stored = 0;
    let match = 0;
    let mismatch = 0;
    let unverifiable = 0;
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!;
      const rank = event.attentionDpRank ?? 0;
      const seq = this.#sequence.observeEvent(server, event);
      if (seq.kind === 'reset') {
        this.#truth.clearRank(server, rank);
        this.#count(obs.ts, `reset|${server}`);
        this.#count(obs.ts, `rreset|${server}|${rank}`);
      } else if (seq.kind === 'gap' && !seq.first) {
        this.#count(obs.ts, `gap|${server}`);
        this.#count(obs.ts, `miss|${server}`, seq.missing);
        this.#count(obs.ts, `rgap|${server}|${rank}`);
        this.#count(obs.ts, `rmiss|${server}|${rank}`, seq.missing);
      }
      this.#truth.apply(server, event);
      let r = perRank.get(rank);
      if (r === undefined) {
        r = { events: 0, stated: 0 };
        perRank.set(rank, r);
      }
      r.events++;
      if (event.attentionDpRank !== null) r.stated++;
      if (event.data.type === 'stored') {
        this.#truthSeen = true;
        stored++;
        const check = checks?.[i] ?? null;
        if (check !== null) {
          for (const c of check.checks) {
            if (c === 'match') match++;
            else if (c === 'mismatch') mismatch++;
            else unverifiable++;
          }
          if (check.alternative !== null) totals.alternativeAlgo = check.alternative;
        }
      }
      if (replicaFromStream) this.#replica.apply(server, event);
      else if (!streamed) {
        const late = relay.push(obs.firstSeq + i, event);
        if (late !== null) this.#applyToReplica(server, late);
      }
    }
    if (events.length > 0) this.#count(obs.ts, `ev|${server}`, events.length);
    for (const [rank, r] of perRank) {
      this.#count(obs.ts, `rev|${server}|${rank}`, r.events);
      if (r.stated > 0) this.#count(obs.ts, `rstated|${server}|${rank}`, r.stated);
    }
    if (stored > 0) this.#count(obs.ts, `stored|${server}`, stored);
    totals.hashMatch += match;
    totals.hashMismatch += mismatch;
    totals.hashUnverifiable += unverifiable;
    if (match > 0) this.#count(obs.ts, `hm|${server}`, match);
    if (mismatch > 0) this.#count(obs.ts, `hx|${server}`, mismatch);
    if (unverifiable > 0) this.#count(obs.ts, `hu|${server}`, unverifiable);
  }

  #streamSequence(obs: StreamSequenceObservation): void {
    const { server, rank, ts } = obs;
    this.#totals(server);
    this.#sawStream = true;
    if (obs.change === 'subscribed') {
      this.#streamServers.add(server);
      return;
    }
    if (obs.change === 'reset') {
      this.#sequence.noteStreamReset(server, rank);
      this.#truth.clearRank(server, rank);
      this.#count(ts, `reset|${server}`);
      this.#count(ts, `rreset|${server}|${rank}`);
      return;
    }
    if (obs.filled > 0) this.#count(ts, `sfill|${server}`, obs.filled);
    if (obs.lost <= 0) return;
    this.#sequence.noteStreamGap(server, rank, obs.lost);
    this.#count(ts, `gap|${server}`);
    this.#count(ts, `miss|${server}`, obs.lost);
    this.#count(ts, `rgap|${server}|${rank}`);
    this.#count(ts, `rmiss|${server}|${rank}`, obs.lost);
  }

  #applyToReplica(server: string, event: CompactEvent): void {
    this.#replica.applyKeys(server, event.type, event.hashAlgo, event.keys);
  }

  #routerPoll(obs: RouterPollObservation): void {
    this.#sawRouterPoll = true;
    this.#pullServers.add(obs.server);
    // the router polls this server's pull path: what its stream put in the replica is not the router's view
    if (this.#replicaStreamed.delete(obs.server)) this.#replica.clearServer(obs.server);
    const totals = this.#totals(obs.server);
    totals.routerPolls++;
    totals.eventsDelivered += Math.max(0, obs.toSeq - obs.fromSeq);
    totals.eventsDropped += obs.dropped;
    this.#count(obs.ts, `poll|${obs.server}`);
    this.#count(obs.ts, `deliv|${obs.server}`, Math.max(0, obs.toSeq - obs.fromSeq));
    for (const event of this.#relayOf(obs.server).deliver(obs.fromSeq, obs.toSeq)) this.#applyToReplica(obs.server, event);
  }

  #serverCount(): number {
    const listed = this.digester.router.servers?.length ?? 0;
    return Math.max(listed, this.#decisionServers.size);
  }

  subscribe(listener: JoinedEventListener): () => void {
    return this.#joined.subscribe(listener);
  }

  /** Applies a decision; returns its join while anyone listens, else null. */
  #decision(obs: DecisionObservation, keys: DecisionKeys | null): DecisionJoin | null {
    const server = obs.server;
    const totals = this.#totals(server);
    totals.requests++;
    this.#decisionServers.add(server);
    this.#count(obs.ts, `req|${server}`);
    this.#count(obs.ts, 'dec');
    if (obs.unreadable !== undefined && obs.unreadable !== null) {
      totals.unreadableRequests++;
      this.#count(obs.ts, `unr|${server}|${obs.unreadable}`);
    }
    if (obs.promptForm === 'text' || obs.promptForm === 'chat') this.#count(obs.ts, 'textChat');

    if (obs.inflight !== null) {
      let busiest = 0;
      for (const [s, n] of Object.entries(obs.inflight)) {
        busiest = Math.max(busiest, n);
        this.#count(obs.ts, `infl|${s}`, n);
        this.#count(obs.ts, `inflN|${s}`);
        this.#totals(s).inflight = n;
      }
      this.#count(obs.ts, 'maxInfl', busiest);
      this.#count(obs.ts, 'maxInflN');
      // how far the load term alone separates the servers: (busiest − idlest) / max_batch_size
      const counts = Object.values(obs.inflight);
      const spread = counts.length > 1 ? (busiest - Math.min(...counts)) / (this.digester.router.maxBatchSize ?? DEFAULT_ROUTER_MAX_BATCH_SIZE) : 0;
      if (spread >= this.#thresholds.sentAwayCacheDelta) this.#count(obs.ts, 'loadSpread');
      this.#max(obs.ts, 'peakInfl', busiest);
    }

    // per-trajectory turn tracking
    let followup = false;
    let sticky: boolean | null = null;
    let prevPromptTokens: number | null = null;
    let prevServer: string | null = null;
    if (obs.correlationId !== null) {
      const traj = this.#trajectories.get(obs.correlationId);
      if (traj) {
        followup = true;
        prevPromptTokens = traj.lastPromptTokens;
        prevServer = traj.lastServer;
        this.#count(obs.ts, 'fu');
        sticky = traj.lastServer === server;
        if (sticky) this.#count(obs.ts, 'sticky');
        traj.lastServer = server;
        traj.turns++;
        traj.lastPromptTokens = obs.promptTokenCount ?? traj.lastPromptTokens;
      } else {
        this.#trajectories.set(obs.correlationId, { lastServer: server, lastPromptTokens: obs.promptTokenCount, turns: 1 });
      }
    }

    let oracleBestTokens = 0;
    let oracleChosenTokens = 0;
    let blockSize = this.digester.blockSizeOf(server) ?? 0;
    let backfillKeys: BigUint64Array[] | null = null;
    const backfillAlgo = this.digester.hashAlgoOf(server);
    let candidates: DecisionJoin['candidates'] = [];
    let oracleBest: string[] = [];
    // router-side ids from kvsentinel's render predict the router; the oracle is the worker's, from its own ids
    const oracleDeferred = obs.promptTokensFrom === 'tokenizer';
    if (keys !== null) {
      const joined = this.#join(obs, keys, !oracleDeferred);
      candidates = joined.candidates;
      oracleBest = joined.oracleBestServers;
      oracleBestTokens = joined.oracleBest;
      oracleChosenTokens = joined.oracleChosen;
      blockSize = joined.blockSize;
      totals.predictedRouterCachedTokens += joined.predictedChosen;
      this.#predictions.set(obs.requestId, joined.predictedAny);
      const reported = this.#reportedScores.peek(obs.requestId);
      if (reported !== undefined) this.#joinScore(obs.ts, joined.predictedAny, reported);
      if (this.#fillsOwnTable() === true) {
        // the router backfills (or tracks) its own keys; with its chunk size unknown, those of every candidate (they never collide)
        backfillKeys = joined.routerTokensPerBlock.map((tpb) => keysAtBlockSize(keys, tpb, backfillAlgo)).filter((k) => k !== undefined);
      }
    }
    const serverCount = this.#serverCount();
    this.#countPreference(obs.ts, 'truth', classifyPreference(server, oracleBest, obs.inflight, serverCount));
    if (prevServer !== null) this.#countPreference(obs.ts, 'turn', classifyPreference(server, [prevServer], obs.inflight, serverCount));
    this.#pending.set(obs.requestId, {
      ts: obs.ts,
      server,
      correlationId: obs.correlationId,
      countFromOutcome: obs.promptTokenCount === null,
      followup,
      sticky,
      prevPromptTokens,
      hasKeys: keys !== null && !oracleDeferred,
      oracleBestTokens,
      oracleChosenTokens,
      blockSize,
      backfillKeys,
      backfillAlgo,
    });
    if (!this.#joined.active) return null;
    return {
      ts: obs.ts,
      requestId: obs.requestId,
      correlationId: obs.correlationId,
      server,
      followup,
      sticky,
      hashedTokens: keys?.hashedTokens ?? null,
      candidates,
      oracleBest,
      chosenIsOracleBest: keys === null || oracleBest.length === 0 ? null : oracleBest.includes(server),
    };
  }

  #countPreference(ts: number, holder: 'truth' | 'turn', sample: PreferenceSample | null): void {
    if (sample === null) return;
    const key = `pref|${holder}|${sample.set}`;
    this.#count(ts, `${key}|n`);
    if (sample.holderChosen) this.#count(ts, `${key}|x`);
    this.#count(ts, `${key}|e`, sample.blindProbability);
  }

  /**
   * The router chunk sizes to predict with: the stated one; else the inferred one; else the candidates (32 and every
   * worker block size) while the router's behaviour decides between them.
   */
  #routerBlockSizes(keys: DecisionKeys): { readonly known: boolean; readonly candidates: readonly number[] } {
    if (this.digester.router.tokensPerBlock !== null) return { known: true, candidates: [keys.routerTokensPerBlock] };
    const inferred = this.#tpbInference.inferred;
    if (inferred !== null) return { known: true, candidates: [inferred] };
    const candidates = [keys.routerTokensPerBlock, ...workerKeySizes(keys).filter((size) => size !== keys.routerTokensPerBlock)];
    this.#tpbCandidates = candidates;
    return { known: false, candidates };
  }

  /** The per-decision join of docs/design.md §4: predicted router matches, oracle matches and scores per server. */
  #join(
    obs: DecisionObservation,
    keys: DecisionKeys,
    withOracle: boolean,
  ): {
    oracleBest: number;
    oracleChosen: number;
    predictedChosen: number;
    predictedAny: boolean;
    blockSize: number;
    candidates: DecisionJoin['candidates'];
    oracleBestServers: string[];
    routerTokensPerBlock: readonly number[];
  } {
    const ts = obs.ts;
    const servers = this.digester.serverIds();
    if (!servers.includes(obs.server)) servers.push(obs.server);
    const n = servers.length;
    const algos = servers.map((s) => this.digester.hashAlgoOf(s));
    const chosenIndex = servers.indexOf(obs.server);
    // predicted router matches under each chunk size the router may use
    const sizes = this.#routerBlockSizes(keys);
    let predictedAny = false;
    const predictedBy = new Map<number, { predicted: number[]; blocks: number[] }>();
    for (const tpb of sizes.candidates) {
      const predicted = new Array<number>(n).fill(0);
      const blocks = new Array<number>(n).fill(0);
      for (let i = 0; i < n; i++) {
        const routerKeys = keysAtBlockSize(keys, tpb, algos[i]!);
        if (routerKeys === undefined) continue;
        predicted[i] = this.#replica.matchedBlocks(servers[i]!, routerKeys, algos[i]) * tpb;
        blocks[i] = routerKeys.length;
        if (predicted[i]! > 0) predictedAny = true;
      }
      predictedBy.set(tpb, { predicted, blocks });
      if (!sizes.known) this.#tpbInference.observe(tpb, predicted, chosenIndex);
    }
    if (!sizes.known) this.#tpbInference.settle();
    // scores and predicted tokens with the known size, or the candidate the router follows best so far
    const tpb = sizes.known ? sizes.candidates[0]! : this.#tpbInference.leader(sizes.candidates, keys.routerTokensPerBlock);
    const { predicted, blocks } = predictedBy.get(tpb)!;
    const oracle = new Array<number>(n).fill(0);
    const scores = new Array<number>(n).fill(0);
    const cacheTerms = new Array<number>(n).fill(0);
    let firstHeld = false;
    let chosenBlockSize = 0;
    for (let i = 0; i < n; i++) {
      const s = servers[i]!;
      const algo = algos[i]!;
      cacheTerms[i] = predicted[i]! / Math.max(blocks[i]! * tpb, 1);
      const size = this.digester.blockSizeOf(s);
      const workerKeys = size === null ? undefined : keys.worker.get(workerKeyId(algo, size));
      if (size !== null && workerKeys !== undefined && workerKeys.length > 0) {
        const match = this.#truth.bestPrefix(s, workerKeys);
        oracle[i] = Math.min(match.bestRankBlocks * size, keys.hashedTokens);
        if (!firstHeld && match.unionBlocks > 0) firstHeld = true;
      }
      if (i === chosenIndex) chosenBlockSize = size ?? 0;
      scores[i] = this.#score(predicted[i]!, blocks[i]!, tpb, obs.inflight?.[s] ?? 0);
    }
    this.#count(ts, 'keys');
    // while the router's chunk size is unknown, a match predicted under any candidate counts (predicted ≡ 0 must
    // hold under every size the router may use)
    if (predictedAny) this.#count(ts, 'predAny');
    const maxOracle = Math.max(...oracle);
    if (withOracle && maxOracle > 0) this.#count(ts, 'oracleAny');
    if (withOracle && firstHeld) this.#count(ts, 'first');
    if (!withOracle) {
      // counted when the worker's ids arrive (#workerTokenJoin)
    } else if (maxOracle <= 0) {
      this.#count(ts, 'noPrefix');
    } else {
      const best = oracle.filter((o) => o === maxOracle).length;
      this.#count(ts, oracle[chosenIndex] === maxOracle ? 'best' : 'notBest');
      this.#count(ts, 'chance', best / n);
      for (let i = 0; i < n; i++) if (oracle[i] === maxOracle) this.#count(ts, `bestHas|${servers[i]!}`);
    }
    const maxScore = Math.max(...scores);
    const agrees = scores[chosenIndex]! >= maxScore - 1e-9;
    if (agrees) this.#count(ts, 'agree');
    // sent away by load: the router did what its (replicated) score says, and the score preferred a less loaded
    // server over one holding much more of the prompt
    const chosenTerm = cacheTerms[chosenIndex]!;
    this.#count(ts, 'ctChosen', chosenTerm);
    this.#count(ts, 'ctBest', Math.max(...cacheTerms));
    if (obs.inflight !== null) {
      // the load term is whatever the score takes away from the cache term (the router's formula decides)
      const loads = scores.map((score, i) => cacheTerms[i]! - score);
      this.#count(ts, 'ldN');
      this.#count(ts, 'ldSpread', Math.max(...loads) - Math.min(...loads));
    }
    if (agrees && cacheTerms.some((c) => c - chosenTerm >= this.#thresholds.sentAwayCacheDelta)) this.#count(ts, 'away');
    const predictedChosen = Math.min(predicted[chosenIndex]!, keys.hashedTokens);
    this.#count(ts, 'pred', predictedChosen);
    return {
      oracleBest: maxOracle,
      oracleChosen: oracle[chosenIndex]!,
      predictedChosen,
      predictedAny,
      blockSize: chosenBlockSize,
      // only the joined-event stream (the live feed) reads them
      candidates: !this.#joined.active ? [] : servers.map((server, i) => ({ server, predictedTokens: predicted[i]!, oracleTokens: oracle[i]!, score: scores[i]! })),
      oracleBestServers: maxOracle > 0 ? servers.filter((_, i) => oracle[i] === maxOracle) : [],
      routerTokensPerBlock: sizes.candidates,
    };
  }

  /** Applies an outcome; returns its join with the decision it closed (null when unknown, or nobody listens). */
  #outcome(obs: OutcomeObservation, workerKeys: DecisionKeys | null): OutcomeJoin | null {
    const server = obs.server;
    const totals = this.#totals(server);
    this.#count(obs.ts, `out|${server}`);
    if (!obs.ok) {
      totals.failures++;
      this.#count(obs.ts, `fail|${server}`);
    }
    const prompt = obs.promptTokens ?? 0;
    const cached = Math.min(obs.cachedTokens ?? 0, prompt);
    if (obs.ok && obs.promptTokens !== null) {
      totals.promptTokens += prompt;
      totals.cachedTokens += cached;
      this.#count(obs.ts, `ptok|${server}`, prompt);
      this.#count(obs.ts, `ctok|${server}`, cached);
      this.#count(obs.ts, 'ptok', prompt);
      this.#count(obs.ts, 'ctok', cached);
    }
    const pending = this.#pending.peek(obs.requestId);
    if (pending === undefined) {
      this.#orphanOutcomes++;
      return null;
    }
    this.#pending.delete(obs.requestId);
    this.#count(obs.ts, 'wout');
    if (pending.countFromOutcome && pending.correlationId !== null && obs.ok) {
      // the next turn's sticky ideal needs this turn's length: the usage (or the worker's ids) gives it
      const traj = this.#trajectories.peek(pending.correlationId);
      const count = obs.promptTokens ?? obs.workerPromptTokens?.length ?? null;
      if (traj !== undefined && count !== null && traj.lastServer === server) traj.lastPromptTokens = count;
    }
    if (pending.backfillKeys !== null && obs.ok) for (const k of pending.backfillKeys) this.#replica.backfill(pending.server, k, pending.backfillAlgo);
    const scattered = obs.ok && obs.promptTokens !== null && pending.followup && cached < 0.5 * prompt;
    const join: OutcomeJoin | null = !this.#joined.active ? null : {
      ts: obs.ts,
      requestId: obs.requestId,
      server,
      ok: obs.ok,
      promptTokens: obs.promptTokens,
      cachedTokens: obs.cachedTokens,
      oracleCachedTokens: pending.hasKeys ? Math.max(Math.min(pending.oracleBestTokens, prompt), cached) : null,
      scattered,
    };
    if (!obs.ok || obs.promptTokens === null) return join;
    if (pending.followup) {
      this.#count(obs.ts, 'fuOut');
      if (scattered) {
        this.#count(obs.ts, 'scat');
        // avoidable: some server held at least half of the prompt (worker truth), or, without truth, the turn left
        // the server that held its earlier turns
        const avoidable = pending.hasKeys && this.#truthSeen ? pending.oracleBestTokens >= 0.5 * prompt : pending.sticky === false;
        if (avoidable) this.#count(obs.ts, 'scatAvoid');
      }
    }
    // the sticky ideal: every follow-up back on its previous server (never below the realised)
    const ideal = pending.followup ? Math.max(cached, pending.prevPromptTokens === null ? 0 : Math.min(pending.prevPromptTokens, prompt - 1)) : cached;
    this.#count(obs.ts, 'ideal', ideal);
    this.#count(obs.ts, 'idealP', prompt);
    // the exported oracle (kvsentinel_oracle_cached_tokens_total) follows the diagnosis: the oracle-best server from
    // worker truth when the sidecar sees stored events, else the sticky ideal — so the tokens lost it gives are those
    // hit-rate-below-oracle reports, also with events off
    // text and chat requests: the worker's own ids (CTX response) give the oracle once the outcome is in
    const workerBest = !pending.hasKeys && workerKeys !== null ? this.#workerTokenJoin(obs.ts, server, cached, workerKeys) : null;
    const joined = pending.hasKeys || workerBest !== null;
    const truthOracle = joined && this.#seesWorkerEvents && this.#truthSeen;
    if (!truthOracle) totals.oracleCachedTokens += ideal;
    if (joined) {
      // the best achievable never trails what was achieved: the chosen server held at least what it reused
      const oracleBest = Math.max(Math.min(workerBest ?? pending.oracleBestTokens, prompt), cached);
      if (truthOracle) totals.oracleCachedTokens += oracleBest;
      this.#count(obs.ts, 'jp', prompt);
      this.#count(obs.ts, 'jc', cached);
      this.#count(obs.ts, 'jo', oracleBest);
    }
    if (pending.hasKeys) {
      this.#count(obs.ts, `joined|${server}`);
      if (cached > pending.oracleChosenTokens + Math.max(pending.blockSize, 1)) this.#count(obs.ts, `above|${server}`);
    }
    return join;
  }

  /** The oracle of a decision that had no keys, from the worker's prompt ids; returns the best server's tokens. */
  #workerTokenJoin(ts: number, server: string, cached: number, keys: DecisionKeys): number {
    const join = workerTokenOracle({
      servers: this.digester.serverIds(),
      chosen: server,
      cachedTokens: cached,
      keys,
      truth: this.#truth,
      blockSizeOf: (s) => this.digester.blockSizeOf(s),
      hashAlgoOf: (s) => this.digester.hashAlgoOf(s),
    });
    this.#count(ts, 'wkeys');
    if (join.best > 0) this.#count(ts, 'oracleAny');
    if (join.best <= 0) this.#count(ts, 'noPrefix');
    else {
      this.#count(ts, join.chosenIsBest ? 'best' : 'notBest');
      this.#count(ts, 'chance', join.bestServers.length / join.servers.length);
      for (const s of join.bestServers) this.#count(ts, `bestHas|${s}`);
    }
    return join.best;
  }

  #routerScore(obs: RouterScoreObservation): void {
    this.#sawRouterDebug = true;
    this.#count(obs.ts, 'rs');
    const anyMatch = obs.candidates.some((c) => c.matchedTokens > 0);
    if (anyMatch) this.#count(obs.ts, 'rsAny');
    const mbs = this.digester.router.maxBatchSize ?? DEFAULT_ROUTER_MAX_BATCH_SIZE;
    const chosen = obs.candidates.find((c) => c.server === obs.chosen);
    if (chosen !== undefined) {
      const term = (c: { score: number; activeRequests: number }): number => c.score + c.activeRequests / mbs;
      const chosenTerm = term(chosen);
      if (obs.candidates.some((c) => term(c) - chosenTerm >= this.#thresholds.sentAwayCacheDelta)) this.#count(obs.ts, 'rsAway');
    }
    const predicted = this.#predictions.peek(obs.requestId);
    if (predicted !== undefined) this.#joinScore(obs.ts, predicted, anyMatch);
    else this.#reportedScores.set(obs.requestId, anyMatch);
  }

  #joinScore(ts: number, replicaPredicted: boolean, routerReported: boolean): void {
    if (!replicaPredicted) return;
    this.#count(ts, 'rsRep');
    if (!routerReported) this.#count(ts, 'rsRepNone');
  }

  #routerServerFact(obs: RouterServerFactObservation): void {
    const totals = this.#totals(obs.server);
    if (obs.fact === 'polling-skipped') {
      totals.pollingSkipped = { routerTokensPerBlock: obs.routerTokensPerBlock, workerTokensPerBlock: obs.workerTokensPerBlock, divisible: obs.divisible };
      return;
    }
    this.#count(obs.ts, `emd|${obs.server}`);
    if (obs.totalMatch > 0) this.#count(obs.ts, `emdTotal|${obs.server}`);
    if (obs.eventMatch > 0) this.#count(obs.ts, `emdEvent|${obs.server}`);
    totals.eventBlocks = obs.eventBlocks;
    totals.totalBlocks = obs.totalBlocks;
  }

  /**
   * The router fills its own table on finish: backfill_block_hashes_on_finish, or the newest router's
   * track_routed_blocks (on unless stated off). Null while neither is known.
   */
  #fillsOwnTable(): boolean | null {
    const r = this.digester.router;
    // the newest router has no backfill (tracking replaced it); the 2026-06 one's is opt-in
    const backfill = r.backfillBlockHashesOnFinish ?? (r.profile !== null ? false : null);
    const tracking = r.trackRoutedBlocks ?? (r.profile === 'newest' ? true : r.profile === '2026-06' ? false : null);
    if (backfill === true || tracking === true) return true;
    return backfill === false && tracking === false ? false : null;
  }

  /** The router's score of one server, with the profile's formula (2026-06 when unknown). */
  #score(matchedTokens: number, promptBlocks: number, tpb: number, active: number): number {
    const r = this.digester.router;
    if (r.profile === 'newest') return matchedTokens / tpb - (r.loadWeight ?? NEWEST_LOAD_WEIGHT) * active;
    return matchedTokens / Math.max(promptBlocks * tpb, 1) - active / (r.maxBatchSize ?? DEFAULT_ROUTER_MAX_BATCH_SIZE);
  }

  #sourceHealth(ts: number, source: string, up: boolean, error: string | null): void {
    let track = this.#sources.get(source);
    if (!track) {
      if (this.#sources.size >= this.#limits.sources) {
        this.#sourcesIgnored++;
        return;
      }
      track = { up: true, error: null, downSince: null, lastFailure: null, failures: 0 };
      this.#sources.set(source, track);
    }
    if (up) {
      track.up = true;
      track.error = null;
      track.downSince = null;
      track.lastFailure = null;
      track.failures = 0;
    } else {
      if (track.up) track.downSince = ts;
      track.up = false;
      track.error = error;
      track.lastFailure = ts;
      track.failures++;
    }
  }

  #expirePending(now: number): void {
    const limit = now - this.#limits.pendingTtlMs;
    for (;;) {
      const oldest = this.#pending.oldest();
      if (oldest === undefined || oldest[1].ts >= limit) return;
      this.#pending.delete(oldest[0]);
      this.#pendingExpired++;
    }
  }

  get #seesWorkerEvents(): boolean {
    // a relay reports the router's polls even when every drain was empty
    return this.#mode === 'relay' || this.#mode === 'exclusive' || (this.#mode === 'auto' && (this.#sawDrain || this.#sawRouterPoll || this.#sawStream));
  }

  #routerTokensPerBlock(): Pick<DiagnosisInput['router'], 'tokensPerBlock' | 'tokensPerBlockFrom' | 'tokensPerBlockCandidates'> {
    const router = this.digester.router;
    if (router.tokensPerBlock !== null) return { tokensPerBlock: router.tokensPerBlock, tokensPerBlockFrom: router.tokensPerBlockFrom, tokensPerBlockCandidates: [] };
    const inferred = this.#tpbInference.inferred;
    if (inferred !== null) return { tokensPerBlock: inferred, tokensPerBlockFrom: 'inferred', tokensPerBlockCandidates: [] };
    const candidates = this.#tpbCandidates.length > 0 ? this.#tpbCandidates : [DEFAULT_ROUTER_TOKENS_PER_BLOCK];
    return { tokensPerBlock: null, tokensPerBlockFrom: null, tokensPerBlockCandidates: [...candidates].sort((a, b) => a - b) };
  }

  diagnosisInput(now: number): DiagnosisInput {
    const w = this.#win;
    const sum = (key: string): number => w.sum(key, now);
    const router = this.digester.router;
    const servers: ServerDiagnosis[] = this.digester.serverIds().map((server) => {
      const totals = this.#totals(server);
      const ranks: RankDiagnosis[] = this.#sequence.ranks(server).map((r) => ({
        rank: r.attentionDpRank,
        stated: r.rankStated,
        events: sum(`rev|${server}|${r.attentionDpRank}`),
        gaps: sum(`rgap|${server}|${r.attentionDpRank}`),
        missedEvents: sum(`rmiss|${server}|${r.attentionDpRank}`),
        resets: sum(`rreset|${server}|${r.attentionDpRank}`),
        lastEventId: r.lastEventId,
      }));
      const inflN = sum(`inflN|${server}`);
      return {
        server,
        requests: sum(`req|${server}`),
        outcomes: sum(`out|${server}`),
        failures: sum(`fail|${server}`),
        promptTokens: sum(`ptok|${server}`),
        cachedTokens: sum(`ctok|${server}`),
        drains: sum(`drain|${server}`),
        emptyDrains: sum(`drain0|${server}`),
        events: sum(`ev|${server}`),
        eventsTotal: this.#all.sum(`ev|${server}`, now),
        streamed: this.#streamServers.has(server),
        streamEvents: sum(`sev|${server}`),
        streamBatchesFilled: sum(`sfill|${server}`),
        storedEvents: sum(`stored|${server}`),
        gaps: sum(`gap|${server}`),
        missedEvents: sum(`miss|${server}`),
        resets: sum(`reset|${server}`),
        ranks,
        routerPolls: sum(`poll|${server}`),
        routerPollsTotal: totals.routerPolls,
        eventsDeliveredToRouter: sum(`deliv|${server}`),
        pollFailures: sum(`pollfail|${server}`),
        hashChecks: { match: sum(`hm|${server}`), mismatch: sum(`hx|${server}`), unverifiable: sum(`hu|${server}`) },
        alternativeHashAlgo: totals.alternativeAlgo,
        vllmHashing: this.#vllmHashingOf(server),
        advertisedHashAlgo: this.digester.advertisedHashAlgo(server),
        hashAlgo: this.digester.hashAlgoOf(server),
        advertisedBlockSize: this.digester.advertisedBlockSize(server),
        inferredBlockSize: this.digester.inferredBlockSize(server),
        truthBlocks: this.#truth.blockCount(server),
        replicaBlocks: this.#replica.blockCount(server),
        routerState: totals.routerState,
        realisedAboveOracle: sum(`above|${server}`),
        joinedOutcomes: sum(`joined|${server}`),
        meanInflight: inflN > 0 ? sum(`infl|${server}`) / inflN : null,
        pollingSkipped: totals.pollingSkipped,
        eventMatchDiag: {
          calls: sum(`emd|${server}`),
          totalMatched: sum(`emdTotal|${server}`),
          eventMatched: sum(`emdEvent|${server}`),
          eventBlocks: totals.eventBlocks,
          totalBlocks: totals.totalBlocks,
        },
        unreadableRequests: Object.fromEntries(REQUEST_UNREADABLE_REASONS.map((r) => [r, sum(`unr|${server}|${r}`)])) as Record<RequestUnreadableReason, number>,
      };
    });
    const maxInflN = sum('maxInflN');
    // the null model of "routing ignores the cache": a server is picked with its observed share of requests
    const decisionsInWindow = sum('dec');
    const share = (server: string): number => (decisionsInWindow > 0 ? sum(`req|${server}`) / decisionsInWindow : 0);
    const tally = (holder: 'truth' | 'turn', set: 'away' | 'tie'): PreferenceTally => {
      const key = `pref|${holder}|${set}`;
      return { decisions: sum(`${key}|n`), holderChosen: sum(`${key}|x`), blindExpected: sum(`${key}|e`) };
    };
    let topServer: string | null = null;
    for (const sv of this.digester.serverIds()) if (share(sv) > 0 && (topServer === null || share(sv) > share(topServer))) topServer = sv;
    const decisions: DecisionDiagnosis = {
      serverCount: this.#serverCount(),
      decisions: sum('dec'),
      withKeys: sum('keys'),
      withWorkerTokens: sum('wkeys'),
      textOrChat: sum('textChat'),
      withOutcome: sum('wout'),
      predictedAnyMatch: sum('predAny'),
      oracleAnyMatch: sum('oracleAny'),
      firstBlockHeld: sum('first'),
      oracleBest: sum('best'),
      notOracleBest: sum('notBest'),
      noPrefix: sum('noPrefix'),
      oracleBestByChance: sum('chance'),
      oracleBestByLoadShare: this.digester.serverIds().reduce((n, sv) => n + share(sv) * sum(`bestHas|${sv}`), 0),
      stickinessByLoadShare: this.digester.serverIds().reduce((n, sv) => n + share(sv) ** 2, 0),
      agreesWithReplica: sum('agree'),
      sentAwayByLoad: sum('away'),
      followups: sum('fu'),
      sticky: sum('sticky'),
      followupsWithOutcome: sum('fuOut'),
      scattered: sum('scat'),
      avoidableScattered: sum('scatAvoid'),
      promptTokens: sum('ptok'),
      cachedTokens: sum('ctok'),
      joinedPromptTokens: sum('jp'),
      joinedCachedTokens: sum('jc'),
      joinedOracleCachedTokens: sum('jo'),
      stickyIdealCachedTokens: sum('ideal'),
      stickyIdealPromptTokens: sum('idealP'),
      predictedCachedTokens: sum('pred'),
      meanMaxInflight: maxInflN > 0 ? sum('maxInfl') / maxInflN : null,
      inflightReports: maxInflN,
      loadSpreadOverCacheDelta: sum('loadSpread'),
      peakInflight: w.maxOf('peakInfl', now),
      realisedAboveOracle: servers.reduce((n, s) => n + s.realisedAboveOracle, 0),
      joinedOutcomes: servers.reduce((n, s) => n + s.joinedOutcomes, 0),
      preference: {
        truth: { away: tally('truth', 'away'), tie: tally('truth', 'tie') },
        turn: { away: tally('turn', 'away'), tie: tally('turn', 'tie') },
      },
      topServerShare: topServer === null ? 0 : share(topServer),
      topServer,
    };
    const sources: SourceDiagnosis[] = [...this.#sources.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([source, t]) => ({ source, up: t.up, error: t.error, downSince: t.downSince, lastFailure: t.lastFailure, failures: t.failures }));
    return {
      now,
      window: w.span(now),
      thresholds: this.#thresholds,
      router: {
        type: router.routerType,
        source: router.source,
        ...this.#routerTokensPerBlock(),
        maxBatchSize: router.maxBatchSize,
        backfillBlockHashesOnFinish: router.backfillBlockHashesOnFinish,
        consumesEvents: routerConsumesEvents(router.routerType),
        profile: router.profile,
        profileFrom: router.profileFrom,
        trackRoutedBlocks: router.trackRoutedBlocks ?? (router.profile === 'newest' ? true : router.profile === '2026-06' ? false : null),
        loadWeight: router.loadWeight ?? (router.profile === 'newest' ? NEWEST_LOAD_WEIGHT : null),
        loadCap: router.loadCap,
        fillsOwnTable: this.#fillsOwnTable(),
      },
      seesWorkerEvents: this.#seesWorkerEvents,
      seesRouterPolls: this.#sawRouterPoll,
      routerPollsExpected: this.#mode === 'relay' || (this.#mode === 'auto' && (this.#sawDrain || this.#sawRouterPoll)),
      seesRouterDebug: this.#sawRouterDebug,
      servers,
      decisions,
      routerScores: {
        decisions: sum('rs'),
        anyMatch: sum('rsAny'),
        sentAwayByLoad: sum('rsAway'),
        replicaPredictedMatch: sum('rsRep'),
        replicaMatchRouterNone: sum('rsRepNone'),
      },
      render: this.#render.diagnosis(now),
      sources,
    };
  }

  snapshot(now: number): SentinelStateSnapshot {
    const input = this.diagnosisInput(now);
    if (this.#lastEvaluation === null || now - this.#lastEvaluation >= this.#evaluateEveryMs) {
      const run = runRules(this.#rules, input);
      this.#ruleErrors += run.errors.length;
      this.#findings = this.#hysteresis.update(now, run.hits);
      // a finding that holds but has not passed hysteresis yet: no all-clear meanwhile
      this.#pendingFindings = new Set(
        [...run.hits.entries()].filter(([id, hit]) => severityRank(hit.severity ?? FINDING_CATALOG[id]) >= severityRank('warning') && !this.#findings.some((f) => f.id === id)).map(([id]) => id),
      );
      this.#lastEvaluation = now;
    }
    return this.#view(now, input, this.#findings);
  }

  peek(now: number): SentinelStateSnapshot {
    const input = this.diagnosisInput(now);
    const findings = [...runRules(this.#rules, input).hits].map(([id, hit]): Finding => ({ id, severity: FINDING_CATALOG[id], since: now, ...hit }));
    return this.#view(now, input, findings);
  }

  #view(now: number, input: DiagnosisInput, findings: readonly Finding[]): SentinelStateSnapshot {
    const all = this.#all;
    const total = (key: string): number => all.sum(key, now);
    const d = input.decisions;
    let oracleHitRatio: number | null = null;
    let oracleBasis: SentinelStateSnapshot['oracleBasis'] = null;
    let tokensLost: number | null = null;
    const truthAvailable = input.servers.some((sv) => sv.storedEvents > 0);
    if (total('jp') > 0 && input.seesWorkerEvents && truthAvailable) {
      oracleHitRatio = total('jo') / total('jp');
      oracleBasis = 'worker-truth';
      tokensLost = Math.max(0, d.joinedOracleCachedTokens - d.joinedCachedTokens);
    } else if (total('fuOut') > 0 && total('idealP') > 0) {
      oracleHitRatio = total('ideal') / total('idealP');
      oracleBasis = 'sticky-ideal';
      tokensLost = Math.max(0, d.stickyIdealCachedTokens - d.cachedTokens);
    }
    const span = input.window;
    const seconds = span === null ? 1 : Math.max(1, (span.to - span.from) / 1000);
    const decisionStats: DecisionStats = {
      oracleBest: total('best'),
      notOracleBest: total('notBest'),
      noPrefix: total('noPrefix'),
      followupTurns: total('fu'),
      stickyTurns: total('sticky'),
      scatteredTurns: total('scat'),
      scoreTerms: { withKeys: total('keys'), chosenCacheTerm: total('ctChosen'), bestCacheTerm: total('ctBest'), withLoad: total('ldN'), loadSpread: total('ldSpread') },
    };
    const prompt = total('ptok');
    return {
      now,
      verdict: verdictOf(findings, findings === this.#findings ? this.#pendingFindings : new Set()),
      findings,
      servers: this.digester.serverIds().map((server) => this.#serverStats(server)),
      decisions: decisionStats,
      cacheHitRatio: prompt > 0 ? total('ctok') / prompt : null,
      oracleHitRatio,
      turnScatterRatio: total('fuOut') > 0 ? total('scat') / total('fuOut') : null,
      requests: total('dec'),
      window: span,
      tokensLostPerSecond: tokensLost === null ? null : tokensLost / seconds,
      oracleBasis,
      routerTokensPerBlock: {
        value: input.router.tokensPerBlock,
        from: input.router.tokensPerBlockFrom,
        candidates: input.router.tokensPerBlockCandidates,
      },
      stickiness: total('fu') > 0 ? total('sticky') / total('fu') : null,
      ruleErrors: this.#ruleErrors,
      eventStreams: [...this.#streamOrigins].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([server, o]) => ({ server, engine: o.engine, hashes: o.hashes, vllmHashing: o.vllmHashing ?? null })),
      dropped: {
        trajectoriesEvicted: this.#trajectories.dropped,
        pendingDecisionsEvicted: this.#pending.dropped,
        pendingDecisionsExpired: this.#pendingExpired,
        relayEventsDropped: [...this.#relay.values()].reduce((n, b) => n + b.dropped, 0),
        relayEventsMissed: [...this.#relay.values()].reduce((n, b) => n + b.missed, 0),
        sourcesIgnored: this.#sourcesIgnored,
        outcomesWithoutDecision: this.#orphanOutcomes,
        scoreJoinsEvicted: this.#predictions.dropped + this.#reportedScores.dropped,
        incrementalKeysEvicted: this.digester.evicted.incrementalKeys,
        v2KeysEvicted: this.digester.evicted.v2Keys,
        serverObservationsIgnored: this.#serverObservationsIgnored,
      },
    };
  }

  #serverStats(server: string): ServerStats {
    const t = this.#totals(server);
    const streams = this.#truth.streams(server);
    const ranks: RankStats[] = this.#sequence.ranks(server).map((r) => {
      const blocksByLevel: Record<number, number> = {};
      for (const s of streams) {
        if (s.attentionDpRank !== r.attentionDpRank) continue;
        s.blocksPerLevel.forEach((n, level) => {
          blocksByLevel[level] = (blocksByLevel[level] ?? 0) + n;
        });
      }
      return {
        rank: r.attentionDpRank,
        eventsByType: r.eventsByType,
        gaps: r.gaps,
        missedEvents: r.missedEvents,
        resets: r.resets,
        lastEventId: r.lastEventId,
        blocksByLevel,
      };
    });
    return {
      server,
      ranks,
      routerTableBlocks: this.#replica.blockCount(server),
      routerPolls: t.routerPolls,
      eventsDeliveredToRouter: t.eventsDelivered,
      eventsDroppedForConsumers: t.eventsDropped,
      hashChecks: { match: t.hashMatch, mismatch: t.hashMismatch, unverifiable: t.hashUnverifiable },
      workerTableBlocksEvicted: this.#truth.evictedBlocks(server),
      routerTableBlocksEvicted: this.#replica.evictedBlocks(server),
      requests: t.requests,
      requestFailures: t.failures,
      unreadableRequests: t.unreadableRequests,
      promptTokens: t.promptTokens,
      cachedTokens: t.cachedTokens,
      oracleCachedTokens: t.oracleCachedTokens,
      predictedRouterCachedTokens: t.predictedRouterCachedTokens,
      inflight: t.inflight,
    };
  }
}

