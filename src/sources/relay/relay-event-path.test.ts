// The relay's event path forwards the worker's bytes: whatever an item's strings hold (valid UTF-8 or not), the
// consumer receives exactly the bytes drained, and the events the parser accepts are observed once.
import { describe, expect, it } from 'vitest';
import { parseKvEvents } from '../../core/wire/parse-kv-events.js';
import { RecordingSink } from '../../../test/helpers/recording-sink.js';
import { silentLogger } from '../ports.js';
import { SourceStatusBoard } from '../source-status.js';
import { RelayEventPath } from './relay-event-path.js';

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const removed = (id: number, salt: number[] = []): number[] => [
  ...utf8(`{"event_id":${id},"data":{"type":"removed","block_hashes":[18446744073709551615]},"x":"`),
  ...salt,
  ...utf8('"}'),
];

describe('RelayEventPath', () => {
  it('forwards the drained bytes exactly, non-UTF-8 bytes included, and observes the events it can read', async () => {
    // item 1 carries bytes that are not UTF-8 in an unknown field: a string decode would have replaced them
    const items = [removed(0), removed(1, [0xff, 0xc3, 0x28]), removed(2, [0xc3, 0xa4])];
    const body = Uint8Array.from([91, ...items[0]!, 44, 32, ...items[1]!, 44, ...items[2]!, 93]);
    const drains = [body];
    const sink = new RecordingSink();
    const clock = (): number => 1_000;
    const path = new RelayEventPath({
      server: 'ctx0',
      source: 'relay:ctx0',
      upstream: 'memory://ctx0',
      drain: () => Promise.resolve(drains.shift() ?? utf8('[]')),
      sink,
      status: new SourceStatusBoard({ sink, clock }),
      clock,
      logger: silentLogger,
      parseEvents: parseKvEvents,
    });
    const answers: Uint8Array[] = [];
    await path.poll(
      () => 'router',
      () => false,
      (answer) => answers.push(answer),
    );
    expect(Array.from(answers[0]!)).toEqual([91, ...items[0]!, 44, ...items[1]!, 44, ...items[2]!, 93]);
    await new Promise((resolve) => setImmediate(resolve)); // events are parsed off the poll's path
    const observed = sink.of('worker-events').flatMap((o) => o.events.map((e) => e.eventId));
    expect(observed).toEqual([0, 2]); // item 1 is forwarded but not read: its string is not UTF-8
    expect(sink.of('worker-events').map((o) => o.firstSeq)).toEqual([0, 2]);
    // a second poll gets nothing twice
    await path.poll(
      () => 'router',
      () => false,
      (answer) => answers.push(answer),
    );
    expect(new TextDecoder().decode(answers[1])).toBe('[]');
  });
});
