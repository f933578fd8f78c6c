// event_id bookkeeping per (server, attention_dp_rank) (docs/design.md §4, docs/trtllm-wire.md §2.1): ids count from 0 per
// event manager, so per ADP rank. A jump forward means events were consumed by another poller or dropped by buffer
// overflow (a gap); an id below the last one means the worker restarted (a reset: the caller must reset that rank's
// tables); the same id again is a duplicate. Also counts events per type per rank, so
// findings can see which ranks ever delivered events (events-partial-ranks).
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

interface RankState {
  readonly server: string;
  readonly rank: number;
  rankStated: boolean;
  last: number | null;
  firstEventId: number | null;
  events: number;
  gaps: number;
  missing: number;
  resets: number;
  duplicates: number;
  unnumbered: number;
  readonly byType: Record<KvEventType, number>;
}

const OK: SequenceObservation = { kind: 'ok', missing: 0, first: false };

function emptyByType(): Record<KvEventType, number> {
  return { created: 0, stored: 0, removed: 0, updated: 0, all_cleared: 0 };
}

export class EventSequenceTracker {
  readonly #ranks = new Map<string, Map<number, RankState>>();

  /**
   * Records one event_id of (server, rank). `rank` null = a non-ADP worker (tracked as rank 0); `eventId` null =
   * an unnumbered item. `type`, when given, feeds the per-type counters.
   */
  observe(server: string, rank: number | null, eventId: number | null, type?: KvEventType): SequenceObservation {
    const state = this.#state(server, rank ?? 0);
    if (rank !== null) state.rankStated = true;
    state.events++;
    if (type !== undefined) state.byType[type]++;
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

  /** A ZMQ stream's batch seq skipped `lost` batches on this rank (streams number batches, not events). */
  noteStreamGap(server: string, rank: number, lost: number): void {
    const state = this.#state(server, rank);
    state.gaps++;
    state.missing += lost;
  }

  /** A ZMQ stream's batch seq went back on this rank: the publisher restarted. */
  noteStreamReset(server: string, rank: number): void {
    this.#state(server, rank).resets++;
  }

  /** `observe` for a parsed event. */
  observeEvent(server: string, event: KvEvent): SequenceObservation {
    return this.observe(server, event.attentionDpRank, event.eventId, event.data.type);
  }

  /** Per-rank counters (of one server, or all), ordered by server then rank. */
  ranks(server?: string): RankSequenceStats[] {
    const servers = server === undefined ? [...this.#ranks.keys()].sort() : [server];
    const out: RankSequenceStats[] = [];
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
  seenRanks(server: string): number[] {
    return [...(this.#ranks.get(server)?.keys() ?? [])].sort((a, b) => a - b);
  }

  /** Forgets a server (e.g. removed from the pool). */
  forgetServer(server: string): void {
    this.#ranks.delete(server);
  }

  #state(server: string, rank: number): RankState {
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
