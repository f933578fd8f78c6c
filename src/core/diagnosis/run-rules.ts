// The dumb runner: evaluates every rule against one input; a rule that throws yields no finding and is counted,
// so one broken rule cannot take the diagnosis (or the daemon) down. A finding names only servers the input knows
// (configured or seen): a name no source gave a server is never shown as one. While the sidecar is behind on its own
// work, the findings that need every event (or every read on time) are held back and named in sidecar-lagging.
import type { FindingId } from './finding-catalog.js';
import type { DiagnosisInput, Rule, RuleHit } from './rule.js';

export interface RuleError {
  readonly id: FindingId;
  readonly message: string;
}

export interface RuleRun {
  readonly hits: ReadonlyMap<FindingId, RuleHit>;
  readonly errors: readonly RuleError[];
}

/** findings a lagging sidecar cannot support: they read tables it may have fallen behind on, or reads that timed out */
export const HELD_WHILE_SIDECAR_LAGS: readonly FindingId[] = [
  'event-queue-shared',
  'events-partial-ranks',
  'router-hash-divergence',
  'hit-rate-below-oracle',
  'event-signal-masked',
  'source-unreachable',
];

function holdBackWhileLagging(hits: Map<FindingId, RuleHit>): void {
  const lagging = hits.get('sidecar-lagging');
  if (lagging === undefined) return;
  const held = HELD_WHILE_SIDECAR_LAGS.filter((id) => hits.delete(id));
  if (held.length > 0)
    hits.set('sidecar-lagging', { ...lagging, evidence: { ...lagging.evidence, held_back: held.join(' ') } });
}

export function runRules(rules: readonly Rule[], input: DiagnosisInput): RuleRun {
  const hits = new Map<FindingId, RuleHit>();
  const errors: RuleError[] = [];
  const known = new Set(input.servers.map((s) => s.server));
  for (const rule of rules) {
    try {
      const hit = rule.evaluate(input);
      if (hit === null) continue;
      const servers = hit.servers.filter((s) => known.has(s));
      hits.set(rule.id, servers.length === hit.servers.length ? hit : { ...hit, servers });
    } catch (err) {
      errors.push({ id: rule.id, message: err instanceof Error ? err.message : String(err) });
    }
  }
  if (input.sidecar.laggingNow) holdBackWhileLagging(hits);
  return { hits, errors };
}
