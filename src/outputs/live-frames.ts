// Frames of the /ws live feed (JSON, one per message). Decisions and outcomes carry counts and ids only: never
// prompt token ids or text. Finding frames are changes (raised / cleared); stats frames summarise the tables.
import type { DecisionObservation, Observation, OutcomeObservation } from '../core/observe/observation.js';
import type { DecisionJoin, OutcomeJoin } from '../core/state/joined-events.js';
import { serverTotals } from '../core/state/server-totals.js';
import type { SentinelSnapshot } from '../core/state/snapshot.js';
import type { Finding } from '../core/diagnosis/finding.js';

export interface DecisionFrame {
  readonly type: 'decision';
  readonly ts: number;
  readonly server: string;
  readonly request_id: string;
  readonly correlation_id: string | null;
  readonly prompt_token_count: number | null;
  readonly inflight: Readonly<Record<string, number>> | null;
  /** the state's join, when it has one: what each server's router table and real cache held for this prompt */
  readonly followup?: boolean;
  readonly sticky?: boolean | null;
  readonly chosen_is_oracle_best?: boolean | null;
  readonly oracle_best?: readonly string[];
  readonly candidates?: readonly {
    readonly server: string;
    readonly predicted_tokens: number;
    readonly oracle_tokens: number;
    readonly score: number;
  }[];
}

export interface OutcomeFrame {
  readonly type: 'outcome';
  readonly ts: number;
  readonly server: string;
  readonly request_id: string;
  readonly ok: boolean;
  readonly prompt_token_count: number | null;
  readonly cached_token_count: number | null;
  readonly latency_ms: number | null;
  readonly oracle_cached_token_count?: number | null;
  readonly scattered?: boolean;
}

export interface SourceFrame {
  readonly type: 'source';
  readonly ts: number;
  readonly source: string;
  readonly up: boolean;
  readonly error: string | null;
}

export interface FindingFrame {
  readonly type: 'finding';
  readonly ts: number;
  readonly change: 'raised' | 'cleared';
  readonly id: string;
  readonly severity: string;
  readonly servers: readonly string[];
  readonly summary: string;
  readonly fix: string;
}

export interface StatsFrame {
  readonly type: 'stats';
  readonly ts: number;
  readonly verdict: string;
  readonly requests: number;
  readonly cache_hit_ratio: number | null;
  readonly oracle_hit_ratio: number | null;
  readonly turn_scatter_ratio: number | null;
  readonly active_findings: readonly string[];
  readonly servers: readonly {
    readonly server: string;
    readonly worker_blocks: number;
    readonly router_table_blocks: number;
    readonly requests: number;
    readonly inflight: number;
    readonly router_polls: number;
    readonly events: number;
    readonly gaps: number;
  }[];
}

export interface HelloFrame {
  readonly type: 'hello';
  readonly ts: number;
  readonly version: string;
}

/**
 * The live report page's content (the HTML report's body, rendered on the server from counts and ids only), sent
 * to clients that connected with `/ws?view=report` instead of the frames above.
 */
export interface ReportFrame {
  readonly type: 'report';
  readonly ts: number;
  readonly html: string;
  /** when it was rendered, as the page shows it (the server's formatter: the page formats no time itself) */
  readonly updated: string;
}

export type LiveFrame =
  DecisionFrame | OutcomeFrame | SourceFrame | FindingFrame | StatsFrame | HelloFrame | ReportFrame;

/** The frame for an observation, or null for kinds the feed does not show one by one. */
export function observationFrame(o: Observation): LiveFrame | null {
  switch (o.kind) {
    case 'decision':
      return decisionFrame(o);
    case 'outcome':
      return outcomeFrame(o);
    case 'source-health':
      return { type: 'source', ts: o.ts, source: o.source, up: o.up, error: o.error };
    case 'worker-events':
    case 'sidecar-load':
    case 'sidecar-stats':
    case 'stream-sequence':
    case 'router-poll':
    case 'render-check':
    case 'server-info':
    case 'router-config':
    case 'router-state':
    case 'router-score':
    case 'poll-failure':
    case 'router-server-fact':
      return null;
  }
}

export function decisionFrame(o: DecisionObservation): DecisionFrame {
  return {
    type: 'decision',
    ts: o.ts,
    server: o.server,
    request_id: o.requestId,
    correlation_id: o.correlationId,
    prompt_token_count: o.promptTokenCount ?? o.promptTokens?.length ?? null,
    inflight: o.inflight,
  };
}

export function outcomeFrame(o: OutcomeObservation): OutcomeFrame {
  return {
    type: 'outcome',
    ts: o.ts,
    server: o.server,
    request_id: o.requestId,
    ok: o.ok,
    prompt_token_count: o.promptTokens,
    cached_token_count: o.cachedTokens,
    latency_ms: o.latencyMs,
  };
}

/** The join facts of a decision (the state's DecisionJoin) as frame fields: counts and server ids only. */
export function withDecisionJoin(
  frame: DecisionFrame,
  join: Pick<DecisionJoin, 'followup' | 'sticky' | 'candidates' | 'oracleBest' | 'chosenIsOracleBest'>,
): DecisionFrame {
  return {
    ...frame,
    followup: join.followup,
    sticky: join.sticky,
    chosen_is_oracle_best: join.chosenIsOracleBest,
    oracle_best: join.oracleBest,
    candidates: join.candidates.map((c) => ({
      server: c.server,
      predicted_tokens: c.predictedTokens,
      oracle_tokens: c.oracleTokens,
      score: c.score,
    })),
  };
}

export function withOutcomeJoin(
  frame: OutcomeFrame,
  join: Pick<OutcomeJoin, 'oracleCachedTokens' | 'scattered'>,
): OutcomeFrame {
  return { ...frame, oracle_cached_token_count: join.oracleCachedTokens, scattered: join.scattered };
}

function findingFrame(f: Finding, change: 'raised' | 'cleared', ts: number): FindingFrame {
  return {
    type: 'finding',
    ts,
    change,
    id: f.id,
    severity: f.severity,
    servers: f.servers,
    summary: f.summary,
    fix: f.fix,
  };
}

/** Findings raised and cleared between two snapshots (keyed by id). */
export function findingChanges(previous: readonly Finding[], next: readonly Finding[], ts: number): FindingFrame[] {
  const before = new Map(previous.map((f) => [f.id, f]));
  const after = new Map(next.map((f) => [f.id, f]));
  const frames: FindingFrame[] = [];
  for (const [id, f] of after) if (!before.has(id)) frames.push(findingFrame(f, 'raised', ts));
  for (const [id, f] of before) if (!after.has(id)) frames.push(findingFrame(f, 'cleared', ts));
  return frames;
}

export function statsFrame(s: SentinelSnapshot): StatsFrame {
  return {
    type: 'stats',
    ts: s.now,
    verdict: s.verdict,
    requests: s.requests,
    cache_hit_ratio: s.cacheHitRatio,
    oracle_hit_ratio: s.oracleHitRatio,
    turn_scatter_ratio: s.turnScatterRatio,
    active_findings: s.findings.map((f) => f.id),
    servers: s.servers.map((v) => {
      const totals = serverTotals(v);
      return {
        server: v.server,
        worker_blocks: totals.workerBlocks,
        router_table_blocks: v.routerTableBlocks,
        requests: v.requests,
        inflight: v.inflight,
        router_polls: v.routerPolls,
        events: totals.events,
        gaps: totals.gaps,
      };
    }),
  };
}
