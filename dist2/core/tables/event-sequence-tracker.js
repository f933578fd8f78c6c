const OK = { kind: 'ok', missing: 0, first: false };
function emptyByType() {
    return { created: 0, stored: 0, removed: 0, updated: 0, all_cleared: 0 };
}
export class EventSequenceTracker {
    #ranks = new Map();
    /**
     * Records one event_id of (server, rank). `rank` null = a non-ADP worker (tracked as rank 0); `eventId` null =
     * an unnumbered item. `type`, when given, feeds the per-type counters.
     */
    observe(server, rank, eventId, type) {
        const state = this.#state(server, rank ?? 0);
        if (rank !== null)
            state.rankStated = true;
        state.events++;
        if (type !== undefined)
            state.byType[type]++;
        if (eventId === null) {
            state.unnumbered++;
            return { kind: 'unnumbered', missing: 0, first: false };
        }
        const last = state.last;
        if (last === null) {
            state.last = eventId;
            state.firstEventId = eventId;
            return eventId === 0 ? { kind: 'ok', missing: 0, first: true } : { kind: 'gap', missing: eventId, first: true };
        }
        if (eventId === last + 1) {
            state.last = eventId;
            return OK;
        }
        if (eventId === last) {
            state.duplicates++;
            return { kind: 'duplicate', missing: 0, first: false };
        }
        state.last = eventId;
        if (eventId > last) {
            const missing = eventId - last - 1;
            state.gaps++;
            state.missing += missing;
            return { kind: 'gap', missing, first: false };
        }
        state.resets++;
        return { kind: 'reset', missing: eventId, first: false };
    }
    /** `observe` for a parsed event. */
    observeEvent(server, event) {
        return this.observe(server, event.attentionDpRank, event.eventId, event.data.type);
    }
    /** Per-rank counters (of one server, or all), ordered by server then rank. */
    ranks(server) {
        const servers = server === undefined ? [...this.#ranks.keys()].sort() : [server];
        const out = [];
        for (const name of servers) {
            const ranks = [...(this.#ranks.get(name)?.values() ?? [])].sort((a, b) => a.rank - b.rank);
            for (const s of ranks) {
                out.push({
                    server: s.server,
                    attentionDpRank: s.rank,
                    rankStated: s.rankStated,
                    lastEventId: s.last,
                    expectedEventId: s.last === null ? null : s.last + 1,
                    events: s.events,
                    gaps: s.gaps,
                    missedEvents: s.missing,
                    firstEventId: s.firstEventId,
                    resets: s.resets,
                    duplicates: s.duplicates,
                    unnumbered: s.unnumbered,
                    eventsByType: { ...s.byType },
                });
            }
        }
        return out;
    }
    /** Ranks of `server` that delivered at least one event, ascending. */
    seenRanks(server) {
        return [...(this.#ranks.get(server)?.keys() ?? [])].sort((a, b) => a - b);
    }
    /** Forgets a server (e.g. removed from the pool). */
    forgetServer(server) {
        this.#ranks.delete(server);
    }
    #state(server, rank) {
        let ranks = this.#ranks.get(server);
        if (!ranks) {
            ranks = new Map();
            this.#ranks.set(server, ranks);
        }
        let state = ranks.get(rank);
        if (!state) {
            state = {
                server,
                rank,
                rankStated: false,
                last: null,
                firstEventId: null,
                events: 0,
                gaps: 0,
                missing: 0,
                resets: 0,
                duplicates: 0,
                unnumbered: 0,
                byType: emptyByType(),
            };
            ranks.set(rank, state);
        }
        return state;
    }
}
//# sourceMappingURL=event-sequence-tracker.js.map