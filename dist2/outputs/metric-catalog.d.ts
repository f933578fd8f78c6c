export type MetricType = 'counter' | 'gauge' | 'histogram';
export interface MetricSpec {
    readonly name: string;
    readonly type: MetricType;
    readonly help: string;
    readonly labels: readonly string[];
}
export declare const METRICS: {
    readonly buildInfo: MetricSpec;
    readonly up: MetricSpec;
    readonly sourceErrors: MetricSpec;
    readonly badInput: MetricSpec;
    readonly configReloadSuccessful: MetricSpec;
    readonly configReloadTimestamp: MetricSpec;
    readonly kvEvents: MetricSpec;
    readonly kvEventGaps: MetricSpec;
    readonly kvEventsMissed: MetricSpec;
    readonly kvEventResets: MetricSpec;
    readonly relayEventsDropped: MetricSpec;
    readonly routerPolls: MetricSpec;
    readonly relayEventsDelivered: MetricSpec;
    readonly hashChecks: MetricSpec;
    readonly workerTableBlocks: MetricSpec;
    readonly routerTableBlocks: MetricSpec;
    readonly requests: MetricSpec;
    readonly requestFailures: MetricSpec;
    readonly promptTokens: MetricSpec;
    readonly cachedTokens: MetricSpec;
    readonly oracleCachedTokens: MetricSpec;
    readonly predictedRouterCachedTokens: MetricSpec;
    readonly decisions: MetricSpec;
    readonly followupTurns: MetricSpec;
    readonly scatteredTurns: MetricSpec;
    readonly inflightRequests: MetricSpec;
    readonly relayDuration: MetricSpec;
    readonly findingActive: MetricSpec;
    readonly verdict: MetricSpec;
};
export type MetricKey = keyof typeof METRICS;
