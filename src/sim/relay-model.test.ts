import { describe, expect, it } from 'vitest';
import type { Observation } from '../core/observe/observation.js';
import type { KvEvent } from '../core/wire/kv-event.js';
import { kvEvent, removed, stored, storedBlock } from '../../test/helpers/kv-event-builders.js';
import { RelayModel, approximateJsonLength } from './relay-model.js';
import { VirtualScheduler } from './scheduler.js';

function harness(options: ConstructorParameters<typeof RelayModel>[3] = {}) {
  const queue: KvEvent[] = [];
  let down = false;
  const worker = {
    id: 'ctx0',
    drainEvents: (): KvEvent[] => {
      if (down) throw new Error('ctx0 is restarting');
      return queue.splice(0);
    },
  };
  const scheduler = new VirtualScheduler();
  const seen: Observation[] = [];
  const relay = new RelayModel(worker, scheduler, (o) => seen.push(o), options);
  const polls = () => seen.filter((o) => o.kind === 'router-poll');
  return { queue, relay, seen, polls, setDown: (value: boolean) => (down = value) };
}

describe('RelayModel (the relay of the virtual driver, on the core event buffer)', () => {
  it('numbers drained events with relay seqs and serves each exactly once, history from the start to the first poll', () => {
    const h = harness();
    h.queue.push(stored([1n]), stored([2n]));
    h.relay.pull();
    h.queue.push(removed([1n]));
    expect(h.relay.serve('router')).toHaveLength(3);
    expect(h.relay.serve('router')).toHaveLength(0);
    h.queue.push(stored([3n]));
    expect(h.relay.serve('router').map((e) => e.data.type)).toEqual(['stored']);
    expect(
      h.seen.filter((o) => o.kind === 'worker-events').map((o) => o.kind === 'worker-events' && o.firstSeq),
    ).toEqual([0, 2, 3]);
    expect(h.polls().map((o) => o.kind === 'router-poll' && [o.fromSeq, o.toSeq, o.dropped])).toEqual([
      [0, 3, 0],
      [3, 3, 0],
      [3, 4, 0],
    ]);
  });

  it('evicts the oldest events past the bound and tells the router how many it lost', () => {
    const h = harness({ maxEvents: 3 });
    for (let i = 0; i < 5; i++) h.queue.push(stored([BigInt(i)]));
    h.relay.pull();
    expect(h.relay.serve('router')).toHaveLength(3);
    expect(h.polls()[0]).toMatchObject({ fromSeq: 2, toSeq: 5, dropped: 2 });
  });

  it('charges an event what its JSON text would cost against the byte bound', () => {
    const big = kvEvent({
      type: 'stored',
      parentHash: null,
      blocks: [
        storedBlock(
          1n,
          0,
          Array.from({ length: 128 }, (_, i) => i),
        ),
      ],
    });
    expect(approximateJsonLength(big)).toBeGreaterThan(128 * 50);
    const h = harness({ maxBytes: approximateJsonLength(big) * 2 });
    h.queue.push(big, big, big);
    h.relay.pull();
    expect(h.relay.serve('router')).toHaveLength(2);
    expect(h.polls()[0]).toMatchObject({ dropped: 1 });
  });

  it('a poll while the worker is down is answered from what was drained, and the relay reports the worker down', () => {
    const h = harness();
    h.queue.push(stored([1n]));
    h.relay.pull();
    h.setDown(true);
    expect(h.relay.serve('router')).toHaveLength(1);
    expect(h.relay.serve('router')).toHaveLength(0);
    expect(h.seen.filter((o) => o.kind === 'source-health')).toMatchObject([
      { source: 'relay:ctx0', up: false },
      { source: 'relay:ctx0', up: false },
    ]);
    h.setDown(false);
    h.queue.push(stored([2n]));
    expect(h.relay.serve('router')).toHaveLength(1);
  });
});
