export interface TurnStatsSnapshot {
    readonly requests: number;
    readonly promptTokens: number;
    readonly cachedTokens: number;
    readonly cacheHitRatio: number;
    readonly followUpTurns: number;
    readonly scatteredTurns: number;
    readonly turnScatterRatio: number;
}
export declare class TurnStats {
    #private;
    /** one served request; `earlierTurnServed` = a previous turn of its trajectory completed */
    add(promptTokens: number, cachedTokens: number, earlierTurnServed: boolean): void;
    snapshot(): TurnStatsSnapshot;
}
