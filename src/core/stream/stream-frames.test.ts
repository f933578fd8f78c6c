// vLLM snapshot mode's two wire builds, as its kv_events.py sends them: the first appends the 16-byte publisher id
// to the live sequence frame (seq.to_bytes(8, "big") + stream_id) and keeps 8-byte replay frames; the current one
// keeps 8-byte frames and ends the array batch with the id (IdentifiedKVEventBatch: [ts, events, dp_rank, id]).
import { encode } from '@msgpack/msgpack';
import { describe, expect, it } from 'vitest';
import { decodeStreamBatch } from './decode-batch.js';
import { decodeLiveMessage, decodeReplayMessage, encodeSeq } from './stream-frames.js';

const id = Uint8Array.from({ length: 16 }, (_, i) => 0xa0 + i);

describe('vLLM snapshot-mode frames', () => {
  it('reads a 24-byte live sequence frame as the seq and the publisher id', () => {
    const frame = encodeSeq(7n, id);
    expect(frame.length).toBe(24);
    const live = decodeLiveMessage([new Uint8Array(0), frame, new Uint8Array([0x90])]);
    expect(live.ok && live.value.seq).toBe(7n);
    expect(live.ok && Array.from(live.value.publisherId ?? [])).toEqual(Array.from(id));
    // a replay reply may carry either width; an 8-byte one has no id
    const empty = new Uint8Array(0);
    const replay = decodeReplayMessage([empty, encodeSeq(3n), new Uint8Array([0x90])]);
    expect(replay).toMatchObject({ ok: true, value: { seq: 3n, publisherId: null } });
    expect(decodeReplayMessage([empty, encodeSeq(3n, id), new Uint8Array([0x90])])).toMatchObject({
      ok: true,
      value: { seq: 3n },
    });
  });

  it('rejects other widths, naming the frame and both accepted widths', () => {
    const bad = decodeLiveMessage([new Uint8Array(0), new Uint8Array(16), new Uint8Array([0x90])]);
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.issue.code).toBe('stream-bad-seq');
      expect(bad.issue.message).toContain('frames[1]');
      expect(bad.issue.message).toContain('16 bytes');
      expect(bad.issue.message).toContain('24');
    }
  });

  it('reads the publisher id an identified batch ends with, and none from a plain batch', () => {
    const identified = decodeStreamBatch(encode([1.5, [], 0, id]));
    expect(Array.from(identified.batch?.publisherId ?? [])).toEqual(Array.from(id));
    expect(identified.batch?.rank).toBe(0);
    const plain = decodeStreamBatch(encode([1.5, [], 0]));
    expect(plain.batch?.publisherId).toBeUndefined();
  });

  it('reads every u64 seq exactly, across the 32-bit and 2^53 boundaries', () => {
    const empty = new Uint8Array(0);
    for (const seq of [0n, 1n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 64n - 2n]) {
      const live = decodeLiveMessage([empty, encodeSeq(seq), new Uint8Array([0x90])]);
      expect(live.ok && live.value.seq).toBe(seq);
      expect(live.ok && live.value.topic).toBe('');
    }
    // all ones is the replay's end marker, whatever width the halves take
    expect(decodeReplayMessage([empty, encodeSeq(2n ** 64n - 1n), empty])).toEqual({ ok: true, value: null });
    const topic = decodeLiveMessage([new TextEncoder().encode('kv@ctx0'), encodeSeq(5n), new Uint8Array([0x90])]);
    expect(topic.ok && topic.value.topic).toBe('kv@ctx0');
  });
});
