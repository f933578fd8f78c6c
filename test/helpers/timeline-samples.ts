// Hand-made timeline samples for the report's unit tests.
import type { TimelineSample } from '../../src/core/report/timeline.js';

/** one server, every counter proportional to n */
export function sample(t: number, n: number, extra: Partial<TimelineSample> = {}): TimelineSample {
  return {
    t,
    verdict: 'healthy',
    findings: [],
    requests: n,
    oracleBest: n,
    notOracleBest: 0,
    noPrefix: 0,
    followups: n,
    sticky: n,
    scoreTerms: { withKeys: n, chosenCacheTerm: n / 2, bestCacheTerm: n / 2, withLoad: n, loadSpread: n / 10 },
    servers: [
      {
        server: 'ctx0',
        requests: n,
        promptTokens: 100 * n,
        cachedTokens: 90 * n,
        oracleCachedTokens: 95 * n,
        predictedRouterCachedTokens: 80 * n,
        ranks: [{ rank: 0, events: 3 * n, gaps: 0, resets: 0 }],
      },
    ],
    ...extra,
  };
}
