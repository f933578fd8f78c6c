import { describe, expect, it } from 'vitest';
import type { KvEvent } from '../wire/kv-event.js';
import { kvEvent, storedBlock } from '../../../test/helpers/kv-event-builders.js';
import { RelayBuffer } from './relay-buffer.js';

function stored(key: bigint): KvEvent {
  return kvEvent({ type: 'stored', parentHash: null, blocks: [storedBlock(key, 0, [1, 2])] }, { windowSize: null });
}

describe('RelayBuffer', () => {
  it('delivers exactly the relay range the router received, once', () => {
    const b = new RelayBuffer(100);
    for (let i = 0; i < 5; i++) expect(b.push(i, stored(BigInt(i + 10)))).toBeNull();
    expect(b.deliver(0, 3).map((e) => e.keys![0])).toEqual([10n, 11n, 12n]);
    expect(b.deliver(0, 3)).toEqual([]);
    expect(b.deliver(3, 5).map((e) => e.keys![0])).toEqual([13n, 14n]);
    expect(b.size).toBe(0);
  });

  it('applies at once events whose poll was seen before the drain', () => {
    const b = new RelayBuffer(100);
    expect(b.deliver(0, 2)).toEqual([]);
    expect(b.push(0, stored(1n))?.keys?.[0]).toBe(1n);
    expect(b.push(2, stored(3n))).toBeNull();
  });

  it('caps memory: drops the oldest and counts what the router then missed', () => {
    const b = new RelayBuffer(3);
    for (let i = 0; i < 10; i++) b.push(i, stored(BigInt(i)));
    expect(b.dropped).toBe(7);
    expect(b.deliver(0, 10).map((e) => e.keys![0])).toEqual([7n, 8n, 9n]);
  });
});
