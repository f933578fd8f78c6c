// The findings as they read ZMQ stream sources (issue 19): the same ids, stream-specific causes and fixes.
import { describe, expect, it } from 'vitest';
import { quietInput, quietServer } from '../../../../test/helpers/diagnosis-input.js';
import { eventQueueShared } from './event-queue-shared.js';
import { eventsAbsent } from './events-absent.js';
import { eventStreamReset } from './event-stream-reset.js';
import { eventsPartialRanks } from './events-partial-ranks.js';
import { routerNotPolling } from './router-not-polling.js';

// a vLLM pod behind a relay that only proxies: events from its stream, no drains, no router polls
const vllm = (server: string, over: Parameters<typeof quietServer>[1] = {}) =>
  quietServer(server, {
    streamed: true,
    streamEvents: 900,
    drains: 0,
    emptyDrains: 0,
    routerPolls: 0,
    routerPollsTotal: 0,
    eventsDeliveredToRouter: 0,
    ...over,
  });

describe('findings on ZMQ streams', () => {
  it('a healthy stream-only server raises none of the event-path findings', () => {
    const input = quietInput({ servers: [vllm('ctx0'), vllm('ctx1')] });
    for (const rule of [eventsAbsent, eventQueueShared, eventStreamReset, routerNotPolling])
      expect(rule.evaluate(input)).toBeNull();
  });

  it('events-absent: streaming publisher enabled while the pull path is empty — the in-tree router is blind', () => {
    // TensorRT-LLM with kv_events_config: the relay drains [] and the router polls it, the stream carries the events
    const blind = quietServer('ctx0', {
      streamed: true,
      streamEvents: 900,
      events: 900,
      emptyDrains: 100,
      eventsDeliveredToRouter: 0,
    });
    const hit = eventsAbsent.evaluate(quietInput({ servers: [blind, quietServer('ctx1')] }));
    expect(hit?.servers).toEqual(['ctx0']);
    expect(hit?.cause).toMatch(
      /^streaming publisher enabled: the pull endpoint returns \[\] and the in-tree router is blind/,
    );
    expect(hit?.evidence).toMatchObject({ stream_events: 900, pull_events: 0 });
  });

  it('events-absent: a subscribed stream that stays silent while the server serves', () => {
    const hit = eventsAbsent.evaluate(
      quietInput({ servers: [vllm('ctx0', { events: 0, streamEvents: 0, storedEvents: 0 }), vllm('ctx1')] }),
    );
    expect(hit?.servers).toEqual(['ctx0']);
    expect(hit?.summary).toMatch(/ZMQ KV-event stream carried no event/);
    expect(hit?.fix).toContain('--kv-events-config');
  });

  it('event-queue-shared says "stream gaps" for a stream and keeps the pull wording for a drained server', () => {
    const hit = eventQueueShared.evaluate(
      quietInput({
        servers: [
          vllm('ctx0', { gaps: 4, missedEvents: 9, streamBatchesFilled: 2 }),
          quietServer('ctx1', { gaps: 3, missedEvents: 30 }),
        ],
      }),
    );
    expect(hit?.servers).toEqual(['ctx1', 'ctx0']);
    expect(hit?.summary).toMatch(
      /^3 event_id gaps on ctx1: 30 events .*; stream gaps: 4 seq gaps on the ZMQ KV-event streams of ctx0 lost 9 batches replay could not refill \(2 more were recovered by replay\)/,
    );
    expect(hit?.evidence).toMatchObject({
      stream_gaps: 4,
      lost_batches: 9,
      replayed_batches: 2,
      gaps: 3,
      missed_events: 30,
    });
  });

  it('event-queue-shared: one unrecoverable stream gap is lost KV state, a warning that says so; replayed gaps stay quiet', () => {
    // issue 23 item 9: 5 batches lost once (52 resident blocks missing) raised nothing while minGaps was 3
    const once = eventQueueShared.evaluate(
      quietInput({ servers: [vllm('ctx0', { gaps: 1, missedEvents: 5 }), vllm('ctx1')] }),
    );
    expect(once?.servers).toEqual(['ctx0']);
    expect(once?.severity).toBe('warning');
    expect(once?.summary).toMatch(
      /^stream gaps: 1 seq gap on the ZMQ KV-event streams of ctx0 lost 5 batches replay could not refill: the blocks those batches stored and removed are missing from kvsentinel's worker tables and from every subscriber's, the router's included/,
    );
    expect(once?.fix).toMatch(/replay_endpoint .*buffer_steps.*a single gap heals/);
    expect(once?.evidence).toMatchObject({
      stream_gaps: 1,
      lost_batches: 5,
      stream_by_server: 'ctx0: 1 gaps, 5 batches lost',
    });
    // the same loss again and again: the router keeps missing state, critical as before
    const repeated = eventQueueShared.evaluate(quietInput({ servers: [vllm('ctx0', { gaps: 3, missedEvents: 15 })] }));
    expect(repeated?.severity).toBeUndefined();
    // noise recovered by replay is no loss at all
    expect(
      eventQueueShared.evaluate(
        quietInput({ servers: [vllm('ctx0', { gaps: 0, missedEvents: 0, streamBatchesFilled: 7 })] }),
      ),
    ).toBeNull();
    // a pull-path gap below minGaps stays quiet (a drain the sidecar aborted loses events too); a stolen one beside a
    // lost stream batch makes the one finding critical
    expect(
      eventQueueShared.evaluate(quietInput({ servers: [quietServer('ctx1', { gaps: 2, missedEvents: 4 })] })),
    ).toBeNull();
    const both = eventQueueShared.evaluate(
      quietInput({
        servers: [vllm('ctx0', { gaps: 1, missedEvents: 5 }), quietServer('ctx1', { gaps: 3, missedEvents: 30 })],
      }),
    );
    expect(both?.severity).toBeUndefined();
    expect(both?.servers).toEqual(['ctx1', 'ctx0']);
  });

  it('event-stream-reset names the stream seq; router-not-polling ignores servers without a pull path', () => {
    expect(eventStreamReset.evaluate(quietInput({ servers: [vllm('ctx0', { resets: 1 })] }))?.summary).toMatch(
      /^the ZMQ stream seq restarted 1 time/,
    );
    // a streamed server that is also drained (TensorRT-LLM behind a relay) still needs the router's polls
    expect(routerNotPolling.evaluate(quietInput({ servers: [vllm('ctx0', { drains: 50 })] }))?.servers).toEqual([
      'ctx0',
    ]);
  });

  it('events-partial-ranks leaves stream servers to source-unreachable (one publisher per rank, no created event)', () => {
    const ranks = (events: number, ...r: number[]) =>
      r.map((rank) => ({ rank, stated: true, events, gaps: 0, missedEvents: 0, resets: 0, lastEventId: null }));
    // an idle rank of a stream is silent, even while rank 0 stores a lot
    expect(
      eventsPartialRanks.evaluate(
        quietInput({ servers: [vllm('ctx0', { ranks: ranks(300, 0) }), vllm('ctx1', { ranks: ranks(300, 0, 1) })] }),
      ),
    ).toBeNull();
    // the same on the pull path (every rank emits created at start) is a lost rank
    expect(
      eventsPartialRanks.evaluate(
        quietInput({
          servers: [quietServer('ctx0', { ranks: ranks(50, 0) }), quietServer('ctx1', { ranks: ranks(50, 0, 1) })],
        }),
      )?.servers,
    ).toEqual(['ctx0']);
  });
});
