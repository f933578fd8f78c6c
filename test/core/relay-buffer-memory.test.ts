// The relay's event buffer is bounded by what its items weigh (maxBytes counts their bytes). Items are views of their
// drain body; one the buffer kept past the rest of its body would keep the whole body alive (as a V8 string slice
// did: in the `demo --fixed` run the buffers of three relays held 114 MB of drain bodies for a few thousand buffered
// events), so the buffer copies such survivors out (BODY_VIEWS). Weighed on the real heap and its array buffers
// after full collections.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { BODY_VIEWS, EventBuffer } from '../../src/core/relay/event-buffer.js';
import { splitJsonArrayBytes } from '../../src/core/relay/split-json-array.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapUsed(): number {
  for (let i = 0; i < 3; i++) gc();
  const used = process.memoryUsage();
  return used.heapUsed + used.arrayBuffers;
}

/** one drain: a stored event of `blocks` block hashes, then a small removed event */
function drainBody(blocks: number, seed: number): string {
  const hashes: string[] = [];
  for (let i = 0; i < blocks; i++) hashes.push(String(1_000_000_000_000_000n + BigInt(seed * blocks + i)));
  return `[{"event_id":${2 * seed},"data":{"type":"stored","parent_hash":null,"blocks":[],"block_hashes":[${hashes.join(',')}]}},{"event_id":${2 * seed + 1},"data":{"type":"removed","block_hashes":[7]}}]`;
}

/** drains of `blocks`-hash stored events through the splitter into `buffer`; returns the text's total size */
function drainInto(buffer: EventBuffer<Uint8Array>, drains: number, blocks: number): number {
  let bodyBytes = 0;
  for (let drain = 0; drain < drains; drain++) {
    const body = Buffer.from(drainBody(blocks, drain));
    bodyBytes += body.length;
    const split = splitJsonArrayBytes(body);
    if (!split.ok) throw new Error(split.issue.message);
    buffer.append(split.items, drain);
  }
  return bodyBytes;
}

describe('relay event buffer memory', () => {
  it('an event kept in the buffer does not keep its drain body alive, nor an evicted event its slot', () => {
    // the bound keeps about one small event per drain: each big stored event is evicted as the next drain arrives
    const buffer = new EventBuffer<Uint8Array>({ maxBytes: 4096 }, undefined, BODY_VIEWS);
    const before = heapUsed();
    const bodyBytes = drainInto(buffer, 8, 100_000); // 8 drains of ~2 MB of text
    const retained = heapUsed() - before;
    const kept = buffer.stats();
    expect(kept.retainedEvents).toBeGreaterThan(0);
    expect(kept.evicted).toBeGreaterThan(0);
    // what stays is the small events and the buffer's own bookkeeping, not a drain's worth
    expect(
      retained,
      `${(retained / 2 ** 20).toFixed(2)} MiB retained after ${(bodyBytes / 2 ** 20).toFixed(1)} MiB of drains`,
    ).toBeLessThan(512 * 1024);
  });
});
