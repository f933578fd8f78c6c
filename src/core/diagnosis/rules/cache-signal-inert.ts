// cache-signal-inert (the headline): routing is statistically independent of where the prefix is cached.
// Behaviour decides (routing-evidence.ts): on decisions where a router blind to the cache would pick the prefix
// holder with a known probability (from the in-flight counts at decision time), does the router pick it more
// often? A router that visibly follows prefixes is never inert, whatever the traffic shape (all traffic on one
// server is load-concentrated) and whatever our model of its table says. Model evidence (predicted matches ≡ 0, the
// router reporting no matches, a dead event path) supports the verdict; a dead event path alone decides it only
// when the router is known not to fill its own table (2026-06 without backfill).
import { withOwnTable } from './own-table-advice.js';
import type { DiagnosisInput, RuleHit, Rule } from '../rule.js';
import { deadEventPath } from './event-path.js';
import { renderDriftSummary } from './render-drift.js';
import { percent, ratio, round3, windowEvidence } from './rule-math.js';
import { followsPrefixes, ignoresPrefixes, routingEvidence, type Evidence } from './routing-evidence.js';

/** Model evidence: what our replica of the router's table, or the router itself, says it matched. */
function modelReasons(input: DiagnosisInput, evidence: Evidence): string[] {
  const t = input.thresholds;
  const d = input.decisions;
  const reasons: string[] = [];
  if (input.router.consumesEvents && d.withKeys >= t.minDecisions) {
    const predicted = ratio(d.predictedAnyMatch, d.withKeys);
    const oracle = ratio(d.oracleAnyMatch, d.withKeys);
    evidence.decisions_with_keys = d.withKeys;
    evidence.predicted_match_share = round3(predicted);
    evidence.oracle_match_share = round3(oracle);
    // with the router's chunk size unknown, predictedAnyMatch counts a match under any size it may use: the
    // criterion then says "no size gives a match", never "the default size gives none"
    const size = input.router.blockSize;
    const unknown = size === null;
    evidence.router_tokens_per_block = unknown
      ? `unknown (predicted under each of ${input.router.tokensPerBlockCandidates.join('/')})`
      : size.tokens;
    if (!unknown) evidence.router_tokens_per_block_from = size.from;
    if (predicted <= t.predictedMatchMaxShare && oracle >= t.oracleMatchMinShare) {
      const sizes = unknown
        ? ` under every tokens_per_block it may use (${input.router.tokensPerBlockCandidates.join(', ')})`
        : '';
      reasons.push(
        `the router's table predicts a match for ${percent(predicted)} of decisions${sizes} while workers hold a prefix for ${percent(oracle)}`,
      );
    }
  }
  const rs = input.routerScores;
  if (input.router.consumesEvents && rs.decisions >= t.minDecisions) {
    const share = ratio(rs.anyMatch, rs.decisions);
    evidence.router_reported_decisions = rs.decisions;
    evidence.router_reported_match_share = round3(share);
    if (share <= t.predictedMatchMaxShare && ratio(d.followups, d.decisions) >= 0.2) {
      reasons.push(`the router reported matched_tokens > 0 for ${percent(share)} of ${rs.decisions} decisions`);
    }
  }
  return reasons;
}

/** The reasons routing is inert, with their evidence; null when the window does not show it. */
export function inertReasons(
  input: DiagnosisInput,
): { readonly reasons: readonly string[]; readonly evidence: Evidence } | null {
  const routing = routingEvidence(input);
  if (followsPrefixes(routing)) return null;
  const evidence: Evidence = { ...routing.evidence };
  const behaviour = ignoresPrefixes(routing);
  const model = modelReasons(input, evidence);
  const dead = deadEventPath(input);
  const deadText =
    dead === null ? [] : [`${dead.causes.join('; ')}, so the router's table holds nothing from the workers`];
  if (dead !== null) evidence.event_path = dead.causes.join('; ');
  evidence.router_fills_own_table = input.router.fillsOwnTable ?? 'unknown';
  let reasons: string[];
  if (behaviour.length > 0) reasons = [...behaviour, ...model, ...deadText];
  // nothing shows routing either way: a dead event path decides only when the router cannot fill its table itself
  else if (
    dead !== null &&
    input.router.fillsOwnTable === false &&
    input.decisions.decisions >= input.thresholds.minServerRequests
  ) {
    reasons = [
      ...deadText,
      `the router (${input.router.profile ?? 'profile unknown'}, backfill off) never inserts hashes of its own: its score is load-only`,
    ];
  } else if (routing.behaviourDecides || routing.chanceBlind.length > 0 || routing.chanceUnjudgeable.length > 0)
    reasons = [];
  else reasons = model;
  return reasons.length === 0 ? null : { reasons, evidence };
}

/** round_robin / load_balancing when the router's type says so, else null */
function blindByDesign(type: string | null): 'round_robin' | 'load_balancing' | null {
  const t = type?.toLowerCase().replace(/[-\s]/g, '_') ?? '';
  if (t.includes('round_robin')) return 'round_robin';
  if (t.includes('load_balancing')) return 'load_balancing';
  return null;
}

export const cacheSignalInert: Rule = {
  id: 'cache-signal-inert',
  evaluate(input): RuleHit | null {
    const found = inertReasons(input);
    if (found === null) return null;
    // a render difference is a cause this rule can name itself: the router hashes other ids than the workers store
    const drift = renderDriftSummary(input);
    // a round-robin or load-balancing router spreads load and never looks at the cache: inert by design, the cost a
    // warning (its tokens lost are hit-rate-below-oracle's); a conversation router is meant to be sticky, so not
    const kind = blindByDesign(input.router.type);
    if (kind !== null)
      return {
        servers: input.servers.map((s) => s.server),
        severity: 'warning',
        summary: `routing ignores where prefixes are cached, by design: a ${kind} router balances load and never routes on the cache (${found.reasons.join('; ')})`,
        evidence: { ...found.evidence, router_type: kind, ...windowEvidence(input.window) },
        cause: `the router is a ${kind} router (router.py ${kind === 'round_robin' ? 'RoundRobinRouter' : 'LoadBalancingRouter'}): it reads no KV events and picks servers by turn or load alone`,
        fix: 'if prefix reuse matters here, router.type kv_cache_aware (with KV events on the workers) or conversation (sticky per conversation)',
      };
    return {
      servers: input.servers.map((s) => s.server),
      summary: `routing ignores where prefixes are cached: ${found.reasons.join('; ')}`,
      evidence: { ...found.evidence, ...windowEvidence(input.window) },
      cause:
        drift !== null
          ? `docs/trtllm-wire.md §7.3: the router hashes other token ids than the workers store (${drift}), so its lookups miss and its score degrades to least-loaded`
          : "docs/trtllm-wire.md §7: the router's per-server block table does not reflect the workers' caches, so its score degrades to least-loaded; the other findings name the cause",
      fix: withOwnTable(
        input,
        'apply the fixes of the findings that name the cause',
        '; meanwhile ',
        " (fills the table with the router's own hashes), or router type: conversation",
      ),
    };
  },
};
