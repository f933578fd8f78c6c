// The stable finding ids of design.md §5. Scripts, alerts and dashboards depend on these strings.
export const SEVERITIES = ['info', 'warning', 'critical'];
export const FINDING_CATALOG = {
    'events-absent': 'critical',
    'event-queue-shared': 'critical',
    'router-not-polling': 'critical',
    'events-partial-ranks': 'warning',
    'event-stream-reset': 'info',
    'hash-mismatch': 'critical',
    'tokens-per-block-mismatch': 'critical',
    'router-hash-divergence': 'critical',
    'router-table-empty': 'critical',
    'cache-signal-inert': 'critical',
    'load-term-dominates': 'warning',
    'turn-scatter-high': 'warning',
    'hit-rate-below-oracle': 'warning',
    'source-unreachable': 'warning',
};
export const FINDING_IDS = Object.keys(FINDING_CATALOG);
export function severityRank(severity) {
    return SEVERITIES.indexOf(severity);
}
//# sourceMappingURL=finding-catalog.js.map