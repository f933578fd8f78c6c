// The stable finding ids of docs/design.md §5. Scripts, alerts and dashboards depend on these strings.

export const SEVERITIES = ['info', 'warning', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const FINDING_CATALOG = {
  'events-absent': 'critical',
  // graded: a warning for a single ZMQ stream gap (state lost once), critical for stolen events or repeated loss
  'event-queue-shared': 'critical',
  'router-not-polling': 'critical',
  'events-partial-ranks': 'warning',
  'event-stream-reset': 'info',
  'hash-mismatch': 'critical',
  'tokens-per-block-mismatch': 'critical',
  'router-hash-divergence': 'critical',
  // graded: critical when the difference costs most router matches, a warning when only the tail differs
  'render-drift': 'critical',
  'router-table-empty': 'critical',
  'cache-signal-inert': 'critical',
  'load-term-dominates': 'warning',
  'turn-scatter-high': 'warning',
  'hit-rate-below-oracle': 'warning',
  'source-unreachable': 'warning',
  'load-concentrated': 'warning',
  'evidence-insufficient': 'warning',
  'event-signal-masked': 'warning',
  // about kvsentinel itself: it fell behind, and what it lost meanwhile is its own loss
  'sidecar-lagging': 'warning',
} as const satisfies Record<string, Severity>;

export type FindingId = keyof typeof FINDING_CATALOG;

/** Findings whose hits may carry a lower severity than the catalog's (their alerts select severity="critical"). */
export const GRADED_FINDINGS: readonly FindingId[] = ['event-queue-shared', 'render-drift'];

export const FINDING_IDS = Object.keys(FINDING_CATALOG) as FindingId[];

export function severityRank(severity: Severity): number {
  return SEVERITIES.indexOf(severity);
}
