// The one-shot audit's result (docs/design.md §7 `audit --json`): verdict, findings with evidence and fixes, headline
// stats and a per-server table, built from a state snapshot. Reporters (text, JSON) only format it.
import { severityRank, type Severity } from './finding-catalog.js';
import type { SentinelStateSnapshot } from '../state/sentinel-state.js';
import type { Finding, Verdict } from '../state/snapshot.js';

export interface AuditServerRow {
  readonly server: string;
  readonly requests: number;
  readonly prompt_tokens: number;
  readonly cached_tokens: number;
  readonly cache_hit_ratio: number | null;
  readonly oracle_cached_tokens: number;
  readonly predicted_router_cached_tokens: number;
  readonly router_table_blocks: number;
  readonly router_polls: number;
  readonly events: number;
  readonly event_gaps: number;
  readonly event_resets: number;
  readonly hash_mismatches: number;
}

export interface AuditSource {
  readonly kind: 'bundle' | 'live';
  readonly description: string;
  readonly observations: number;
  /** malformed input items skipped */
  readonly malformed: number;
}

export interface AuditReport {
  readonly verdict: Verdict;
  /** the snapshot's findings, most severe first (the same shape as everywhere else) */
  readonly findings: readonly Finding[];
  readonly stats: {
    readonly requests: number;
    readonly cache_hit_ratio: number | null;
    readonly oracle_hit_ratio: number | null;
    readonly oracle_basis: 'worker-truth' | 'sticky-ideal' | null;
    readonly turn_scatter_ratio: number | null;
    readonly stickiness: number | null;
    readonly tokens_lost_per_second: number | null;
    readonly window_seconds: number | null;
    /** the router's chunk size and where it comes from ('inferred' = from its routing); null while unknown */
    readonly router_tokens_per_block: number | null;
    readonly router_tokens_per_block_from: string | null;
  };
  readonly servers: readonly AuditServerRow[];
  readonly source: AuditSource;
  /** rules that crashed (their findings are missing) */
  readonly rule_errors: number;
  /** what the audit could not check and why, each said once */
  readonly notes: readonly string[];
}

function round(value: number | null, digits = 4): number | null {
  if (value === null) return null;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export function buildAuditReport(snapshot: SentinelStateSnapshot, source: AuditSource): AuditReport {
  // most severe first, catalog order within a severity
  const findings = [...snapshot.findings]
    .map((f, i) => ({ f, i }))
    .sort((a, b) => severityRank(b.f.severity) - severityRank(a.f.severity) || a.i - b.i)
    // a fresh object with the fields in a fixed order: the JSON report never carries extra fields of a snapshot
    .map(({ f }): Finding => ({ id: f.id, severity: f.severity, servers: f.servers, summary: f.summary, evidence: f.evidence, cause: f.cause, fix: f.fix, since: f.since }));
  return {
    verdict: snapshot.verdict,
    findings,
    stats: {
      requests: snapshot.requests,
      cache_hit_ratio: round(snapshot.cacheHitRatio),
      oracle_hit_ratio: round(snapshot.oracleHitRatio),
      oracle_basis: snapshot.oracleBasis,
      turn_scatter_ratio: round(snapshot.turnScatterRatio),
      stickiness: round(snapshot.stickiness),
      tokens_lost_per_second: round(snapshot.tokensLostPerSecond, 1),
      window_seconds: snapshot.window === null ? null : round((snapshot.window.to - snapshot.window.from) / 1000, 1),
      router_tokens_per_block: snapshot.routerTokensPerBlock.value,
      router_tokens_per_block_from: snapshot.routerTokensPerBlock.from,
    },
    servers: snapshot.servers.map((s) => ({
      server: s.server,
      requests: s.requests,
      prompt_tokens: s.promptTokens,
      cached_tokens: s.cachedTokens,
      cache_hit_ratio: s.promptTokens > 0 ? round(s.cachedTokens / s.promptTokens) : null,
      oracle_cached_tokens: s.oracleCachedTokens,
      predicted_router_cached_tokens: s.predictedRouterCachedTokens,
      router_table_blocks: s.routerTableBlocks,
      router_polls: s.routerPolls,
      events: s.ranks.reduce((n, r) => n + Object.values(r.eventsByType).reduce((a, b) => a + b, 0), 0),
      event_gaps: s.ranks.reduce((n, r) => n + r.gaps, 0),
      event_resets: s.ranks.reduce((n, r) => n + r.resets, 0),
      hash_mismatches: s.hashChecks.mismatch,
    })),
    source,
    rule_errors: snapshot.ruleErrors,
    notes: auditNotes(snapshot),
  };
}

function auditNotes(snapshot: SentinelStateSnapshot): string[] {
  const notes: string[] = [];
  const byEngine = new Map<string, string[]>();
  for (const s of snapshot.eventStreams) if (s.hashes === 'rekeyed') byEngine.set(s.engine, [...(byEngine.get(s.engine) ?? []), s.server]);
  for (const [engine, servers] of byEngine) {
    notes.push(
      `hash verification: ${servers.join(', ')} publish ${engine} block hashes kvsentinel does not recompute ` +
        `(${engine === 'vllm' ? "vLLM's sha256 / sha256_cbor / builtin families, seeded per deployment" : "SGLang's per-build page hashes"}); ` +
        'their blocks are re-keyed from their token ids for the joins, and their hash checks read unverifiable',
    );
  }
  // Unreadable bodies page nothing when the decisions were still joined (from the workers' own prompt ids), but the
  // audit never passes over them in silence: evidence-insufficient names them when they leave too little to judge.
  const unreadable = snapshot.servers.filter((s) => s.unreadableRequests > 0);
  if (unreadable.length > 0 && !snapshot.findings.some((f) => f.id === 'evidence-insufficient')) {
    const total = unreadable.reduce((n, s) => n + s.unreadableRequests, 0);
    notes.push(
      `unreadable requests: the relay could not read ${total} of ${snapshot.requests} CTX request bodies ` +
        `(${unreadable.map((s) => `${s.server} ${s.unreadableRequests}`).join(', ')}); their prompts come from the workers' own ` +
        'prompt_token_ids where the responses carry them; kvsentinel_relay_requests_unreadable_total gives the reasons',
    );
  }
  return notes;
}

/**
 * What a verdict means, one line (the text and HTML reports print it after the verdict). `degraded` implies routing
 * visibly follows prefixes (else evidence-insufficient holds and the verdict is `unknown`).
 */
export function verdictMeaning(verdict: Verdict, hasCritical = false): string {
  switch (verdict) {
    case 'inert':
      return "the router's prefix-cache signal is dead: routing ignores where prefixes are cached";
    case 'unknown':
      return 'the window does not show whether routing follows the prefix cache: see evidence-insufficient for what is missing';
    case 'degraded':
      return hasCritical ? 'routing follows prefixes, but critical findings below break part of the cache signal' : 'routing follows prefixes, but findings below cost prefix-cache hits';
    case 'healthy':
      return 'routing follows the prefix cache';
  }
}

/** Exit code when nothing is at or above --fail-on, yet the evidence does not support an all-clear (verdict unknown). */
export const EXIT_EVIDENCE_INSUFFICIENT = 3;

/**
 * Exit code of docs/design.md §6: 1 when a finding other than evidence-insufficient is at or above `failOn`; else 3
 * when the verdict is unknown (evidence-insufficient: no all-clear without evidence, whatever --fail-on says); else 0.
 */
export function auditExitCode(report: AuditReport, failOn: Severity): 0 | 1 | 3 {
  if (report.findings.some((f) => f.id !== 'evidence-insufficient' && severityRank(f.severity) >= severityRank(failOn))) return 1;
  return report.verdict === 'unknown' ? EXIT_EVIDENCE_INSUFFICIENT : 0;
}
