// The one-shot audit's result (docs/design.md §7 `audit --json`): verdict, findings with evidence and fixes, headline
// stats and a per-server table, built from a state snapshot. Reporters (text, JSON) only format it.
import { severityRank, type Severity } from '../diagnosis/finding-catalog.js';
import type { SentinelStateSnapshot } from '../state/sentinel-state.js';
import { serverTotals } from '../state/server-totals.js';
import type { ServerStats } from '../state/snapshot.js';
import type { Finding } from '../diagnosis/finding.js';
import type { Verdict } from '../diagnosis/verdict.js';
import type { SteadyStateStats } from './steady-window.js';

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
  /** stored blocks whose hash recomputed, and those that could not be checked (see the audit's notes) */
  readonly hash_matches: number;
  readonly hash_unverifiable: number;
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
  /** a run that started cold (the demo): the window after its warm-up; absent when none was measured */
  readonly steady_state?: SteadyStateStats;
}

function round(value: number | null, digits = 4): number | null {
  if (value === null) return null;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export function buildAuditReport(
  snapshot: SentinelStateSnapshot,
  source: AuditSource,
  steadyState: SteadyStateStats | null = null,
): AuditReport {
  // most severe first, catalog order within a severity
  const findings = [...snapshot.findings]
    .map((f, i) => ({ f, i }))
    .sort((a, b) => severityRank(b.f.severity) - severityRank(a.f.severity) || a.i - b.i)
    // a fresh object with the fields in a fixed order: the JSON report never carries extra fields of a snapshot
    .map(({ f }): Finding => ({
      id: f.id,
      severity: f.severity,
      servers: f.servers,
      summary: f.summary,
      evidence: f.evidence,
      cause: f.cause,
      fix: f.fix,
      since: f.since,
    }));
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
    servers: snapshot.servers.map((s) => serverRow(s)),
    source,
    rule_errors: snapshot.ruleErrors,
    notes: auditNotes(snapshot),
    ...(steadyState !== null ? { steady_state: steadyState } : {}),
  };
}

function serverRow(s: ServerStats): AuditServerRow {
  const totals = serverTotals(s);
  return {
    server: s.server,
    requests: s.requests,
    prompt_tokens: s.promptTokens,
    cached_tokens: s.cachedTokens,
    cache_hit_ratio: s.promptTokens > 0 ? round(s.cachedTokens / s.promptTokens) : null,
    oracle_cached_tokens: s.oracleCachedTokens,
    predicted_router_cached_tokens: s.predictedRouterCachedTokens,
    router_table_blocks: s.routerTableBlocks,
    router_polls: s.routerPolls,
    events: totals.events,
    event_gaps: totals.gaps,
    event_resets: totals.resets,
    hash_mismatches: s.hashChecks.mismatch,
    hash_matches: s.hashChecks.match,
    hash_unverifiable: s.hashChecks.unverifiable,
  };
}

/** What the audit could and could not verify of re-keyed streams' own hashes, once per kind of stream. */
function streamHashNotes(snapshot: SentinelStateSnapshot): string[] {
  const groups = new Map<string, string[]>();
  for (const s of snapshot.eventStreams) {
    if (s.hashes !== 'rekeyed') continue;
    const h = s.vllmHashing;
    const kind =
      s.engine !== 'vllm'
        ? s.engine
        : h?.algo === 'sha256_cbor'
          ? h.seedKnown
            ? 'vllm-cbor-seed'
            : 'vllm-cbor'
          : `vllm-${h?.algo ?? 'unstated'}`;
    groups.set(kind, [...(groups.get(kind) ?? []), s.server]);
  }
  const rekeyed = 'their blocks are re-keyed from their token ids for the joins';
  const checks = (servers: readonly string[]): string => {
    const c = snapshot.servers
      .filter((s) => servers.includes(s.server))
      .reduce(
        (t, s) => ({ m: t.m + s.hashChecks.match, x: t.x + s.hashChecks.mismatch, u: t.u + s.hashChecks.unverifiable }),
        { m: 0, x: 0, u: 0 },
      );
    return `${c.m} blocks match, ${c.x} mismatch, ${c.u} unverifiable`;
  };
  const notes: string[] = [];
  for (const [kind, servers] of groups) {
    const who = servers.join(', ');
    if (kind === 'vllm-cbor-seed' || kind === 'vllm-cbor') {
      notes.push(
        `hash verification: ${who} hash with vLLM sha256_cbor; kvsentinel recomputes each block from its parent's hash, its token ids and its extra_keys ` +
          (kind === 'vllm-cbor-seed'
            ? '(root blocks from the PYTHONHASHSEED given); '
            : '(no PYTHONHASHSEED given: root blocks, and with VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES their children, are unverifiable; give seed= to verify them); ') +
          `${checks(servers)} — unverifiable are blocks whose parent was never seen in full (int hashes carry 64 bits), or whose ` +
          `extra keys the stream does not carry (vLLM before extra_keys in BlockStored); ${rekeyed}`,
      );
    } else if (kind.startsWith('vllm-')) {
      const algo = kind.slice('vllm-'.length);
      const why =
        algo === 'unstated'
          ? "their hash algorithm was not stated (vLLM's default is sha256, a pickle; give hash=sha256_cbor if the workers run with it)"
          : algo === 'xxhash_cbor'
            ? 'xxhash_cbor (xxh3-128) is not recomputed'
            : `${algo} hashes a Python ${algo === 'builtin' ? 'hash()' : 'pickle'}, which kvsentinel does not reproduce`;
      notes.push(
        `hash verification: ${who} publish vLLM block hashes kvsentinel does not recompute: ${why}; ${rekeyed}, and their hash checks read unverifiable`,
      );
    } else {
      notes.push(
        `hash verification: ${who} publish ${kind === 'sglang' ? "SGLang's per-build page hashes" : `${kind} block hashes`}, which kvsentinel does not recompute; ${rekeyed}, and their hash checks read unverifiable`,
      );
    }
  }
  return notes;
}

function auditNotes(snapshot: SentinelStateSnapshot): string[] {
  const notes: string[] = [];
  notes.push(...streamHashNotes(snapshot));
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
      return hasCritical
        ? 'routing follows prefixes, but critical findings below break part of the cache signal'
        : 'routing follows prefixes, but findings below cost prefix-cache hits';
    case 'healthy':
      return 'routing follows the prefix cache';
  }
}

/** Exit code when nothing is at or above --fail-on, yet the evidence does not support an all-clear (verdict unknown). */
export const EXIT_EVIDENCE_INSUFFICIENT = 3;
/** Exit code when the one finding at or above --fail-on is that a source the audit reads could not be reached. */
export const EXIT_SOURCE_UNREACHABLE = 5;

/**
 * Exit code of docs/design.md §7: 1 when a finding about the router is at or above `failOn`; else 5 when
 * source-unreachable is (the audit could not see, which is not the router's fault); else 3 when the verdict is
 * unknown (evidence-insufficient: no all-clear without evidence, whatever --fail-on says); else 0.
 */
export function auditExitCode(report: AuditReport, failOn: Severity): 0 | 1 | 3 | 5 {
  const failing = report.findings.filter(
    (f) => f.id !== 'evidence-insufficient' && severityRank(f.severity) >= severityRank(failOn),
  );
  if (failing.some((f) => f.id !== 'source-unreachable')) return 1;
  if (failing.length > 0) return EXIT_SOURCE_UNREACHABLE;
  return report.verdict === 'unknown' ? EXIT_EVIDENCE_INSUFFICIENT : 0;
}
