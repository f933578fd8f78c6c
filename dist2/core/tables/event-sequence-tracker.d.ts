import type { KvEvent, KvEventType } from '../wire/kv-event.js';
export type SequenceKind = 'ok' | 'gap' | 'reset' | 'duplicate' | 'unnumbered';
export interface SequenceObservation {
    /**
     * ok: the expected next id (or id 0 on the first event); gap: ids were skipped; reset: the id went below the
     * last one (worker restart: reset this rank's tables); duplicate: the last id again; unnumbered: the event had
     * no event_id (flat item form) and was not tracked.
     */
    readonly kind: SequenceKind;
    /**
     * ids known to be missing before this one: the skipped ids of a gap; for a reset, the ids of the new life before
     * this one (0..id-1); for the first event of a rank, its id (events from before we started listening).
     */
    readonly missing: number;
    /** true for the first numbered event seen on this (server, rank) */
    readonly first: boolean;
}
export interface RankSequenceStats {
    readonly server: string;
    readonly attentionDpRank: number;
    /** whether any event stated attention_dp_rank (false: a non-ADP worker, rank 0 by default) */
    readonly rankStated: boolean;
    readonly lastEventId: number | null;
    /** next id expected, null before the first numbered event */
    readonly expectedEventId: number | null;
    readonly events: number;
    readonly gaps: number;
    /** ids skipped by gaps after the first event (snapshot RankStats.missedEvents) */
    readonly missedEvents: number;
    /** id of the first event seen (ids before it were never observed), null before any */
    readonly firstEventId: number | null;
    readonly resets: number;
    readonly duplicates: number;
    readonly unnumbered: number;
    readonly eventsByType: Readonly<Record<KvEventType, number>>;
}
export declare class EventSequenceTracker {
    #private;
    /**
     * Records one event_id of (server, rank). `rank` null = a non-ADP worker (tracked as rank 0); `eventId` null =
     * an unnumbered item. `type`, when given, feeds the per-type counters.
     */
    observe(server: string, rank: number | null, eventId: number | null, type?: KvEventType): SequenceObservation;
    /** `observe` for a parsed event. */
    observeEvent(server: string, event: KvEvent): SequenceObservation;
    /** Per-rank counters (of one server, or all), ordered by server then rank. */
    ranks(server?: string): RankSequenceStats[];
    /** Ranks of `server` that delivered at least one event, ascending. */
    seenRanks(server: string): number[];
    /** Forgets a server (e.g. removed from the pool). */
    forgetServer(server: string): void;
}
