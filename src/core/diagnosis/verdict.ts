// The headline of an evaluation: what the findings that hold (and those still passing hysteresis) let the sidecar
// say about whether routing follows the prefix cache.
import { severityRank } from './finding-catalog.js';
import type { Finding } from './finding.js';

/** unknown: evidence-insufficient holds — the window cannot show whether routing follows the prefix cache */
export type Verdict = 'healthy' | 'degraded' | 'unknown' | 'inert';

/**
 * `pending`: warnings and criticals that hold in the latest evaluation but have not turned on yet (hysteresis).
 * While inert or insufficient evidence is pending, or anything is pending on an otherwise clean slate, the verdict
 * is `unknown`: neither "routing follows prefixes" (degraded) nor an all-clear is shown yet. So is it while the
 * sidecar's own lag (sidecar-lagging) leaves its tables short: that is no finding about the deployment.
 */
export function verdictOf(findings: readonly Finding[], pending: ReadonlySet<string>): Verdict {
  if (findings.some((f) => f.id === 'cache-signal-inert')) return 'inert';
  const insufficient = findings.filter((f) => f.id === 'evidence-insufficient');
  // a stream's missing history alone (routing follows what the table shows) withholds the all-clear only
  const historyOnly = insufficient.length > 0 && insufficient.every((f) => f.evidence['history_only'] === true);
  // no all-clear (and no "the cache signal works") without evidence
  if (
    (insufficient.length > 0 && !historyOnly) ||
    // nor from a sidecar whose tables fell behind
    findings.some((f) => f.id === 'sidecar-lagging') ||
    pending.has('cache-signal-inert') ||
    pending.has('evidence-insufficient')
  )
    return 'unknown';
  if (findings.some((f) => severityRank(f.severity) >= severityRank('warning'))) return 'degraded';
  return pending.size > 0 || historyOnly ? 'unknown' : 'healthy';
}
