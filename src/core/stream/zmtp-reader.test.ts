import { describe, expect, it } from 'vitest';
import {
  FLAG_COMMAND,
  FLAG_LONG,
  FLAG_MORE,
  GREETING_BYTES,
  encodeFrame,
  readCommand,
  readGreeting,
  readMetadata,
  readyCommand,
  subscribeMessage,
  subscriberGreeting,
} from './zmtp-handshake.js';
import { ZmtpReader } from './zmtp-reader.js';

interface Read {
  greetings: Uint8Array[];
  frames: { flags: number; body: number[] }[];
  views: Uint8Array[];
}

function reader(maxFrameBytes?: number): { r: ZmtpReader; read: Read } {
  const read: Read = { greetings: [], frames: [], views: [] };
  const r = new ZmtpReader(
    {
      greeting: (g) => void read.greetings.push(g.slice()),
      frame: (flags, body) => {
        read.frames.push({ flags, body: body.length > 1_000 ? [body.length] : Array.from(body) });
        read.views.push(body);
      },
    },
    maxFrameBytes,
  );
  return { r, read };
}

const concat = (...parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

const bytes = (n: number, seed: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);

/** a peer's greeting (3.1, as libzmq 4.3 sends), a READY, then a 3-frame message whose payload needs an 8-byte size */
function stream(): Uint8Array {
  const greeting = subscriberGreeting();
  greeting[11] = 1;
  return concat(
    greeting,
    readyCommand('PUB'),
    encodeFrame(FLAG_MORE, new Uint8Array(0)),
    encodeFrame(FLAG_MORE, bytes(8, 1)),
    encodeFrame(0, bytes(300, 2)),
    encodeFrame(0, bytes(255, 3)),
  );
}

describe('ZmtpReader', () => {
  it('reads a greeting and frames, short and long, whatever the chunks', () => {
    const whole = reader();
    whole.r.push(stream());
    expect(whole.read.greetings).toHaveLength(1);
    expect(whole.read.frames.map((f) => [f.flags, f.body.length])).toEqual([
      [FLAG_COMMAND, readyCommand('PUB').length - 2],
      [FLAG_MORE, 0],
      [FLAG_MORE, 8],
      [FLAG_LONG, 300],
      [0, 255],
    ]);
    // every split of the stream in two, and byte by byte, reads the same
    const s = stream();
    for (let cut = 1; cut < s.length; cut++) {
      const split = reader();
      split.r.push(s.subarray(0, cut));
      split.r.push(s.subarray(cut));
      expect(split.read.greetings, `cut at ${cut}`).toEqual(whole.read.greetings);
      expect(split.read.frames, `cut at ${cut}`).toEqual(whole.read.frames);
    }
    const bytewise = reader();
    for (let i = 0; i < s.length; i++) expect(bytewise.r.push(s.subarray(i, i + 1))).toBe(true);
    expect(bytewise.read.frames).toEqual(whole.read.frames);
  });

  it('hands on a frame inside one chunk as a view of it, without a copy', () => {
    const s = stream();
    const { r, read } = reader();
    r.push(s);
    for (const view of read.views) expect(view.buffer).toBe(s.buffer);
  });

  it('refuses a frame above its bound, naming its byte in the stream, and reads nothing after', () => {
    const { r, read } = reader(1_000);
    const big = encodeFrame(0, bytes(1_001, 4));
    const first = encodeFrame(0, bytes(10, 5));
    expect(r.push(concat(subscriberGreeting(), first))).toBe(true);
    expect(r.push(concat(big, first))).toBe(false);
    expect(r.error).toBe(
      `a frame of 1001 bytes at byte ${GREETING_BYTES + first.length} of the stream, above the bound of 1000`,
    );
    expect(r.push(first)).toBe(false);
    expect(read.frames).toHaveLength(1);
  });

  it('joins a long frame that comes in many chunks once, when it is whole', () => {
    const body = bytes(200_000, 6);
    const s = concat(subscriberGreeting(), encodeFrame(0, body));
    const { r, read } = reader();
    for (let at = 0; at < s.length; at += 65_536) r.push(s.subarray(at, at + 65_536));
    expect(read.views).toHaveLength(1);
    expect(Buffer.from(read.views[0]!).equals(Buffer.from(body))).toBe(true);
  });
});

describe('the ZMTP 3.0 handshake', () => {
  it('greets as a 3.0 NULL client, and reads a peer greeting', () => {
    const g = subscriberGreeting();
    expect(g.length).toBe(64);
    expect([g[0], g[9], g[10], g[11], g[32]]).toEqual([0xff, 0x7f, 3, 0, 0]);
    expect(readGreeting(g)).toEqual({ ok: true, value: { major: 3, minor: 0, mechanism: 'NULL' } });
  });

  it('refuses what is not a ZMTP 3 greeting, saying what it saw', () => {
    const http = new TextEncoder().encode(`HTTP/1.1 400 Bad Request\r\n${' '.repeat(64)}`);
    expect(readGreeting(http)).toEqual({
      ok: false,
      reason: 'not a ZMTP greeting (it starts 48 54 54 50 2f 31 2e 31 20 34)',
    });
    const old = subscriberGreeting();
    old[10] = 2;
    const refusal = readGreeting(old);
    expect(refusal.ok).toBe(false);
    expect(refusal.ok ? '' : refusal.reason).toContain('ZMTP 2.0');
    const curve = subscriberGreeting();
    curve.set(new TextEncoder().encode('CURVE'), 12);
    expect(readGreeting(curve)).toMatchObject({ ok: true, value: { mechanism: 'CURVE' } });
  });

  it('encodes READY with its socket type, and reads the metadata back (names in any case)', () => {
    const frame = readyCommand('SUB');
    expect(frame[0]).toBe(FLAG_COMMAND);
    const command = readCommand(frame.subarray(2));
    expect(command?.name).toBe('READY');
    expect(readMetadata(command!.data)).toEqual(new Map([['socket-type', 'SUB']]));
    // a property whose value overruns the command is malformed
    expect(readMetadata(command!.data.subarray(0, command!.data.length - 1))).toBeNull();
  });

  it('subscribes as a 3.0 message: 01, then the topic', () => {
    expect(Array.from(subscribeMessage(new Uint8Array(0)))).toEqual([0, 1, 1]);
    expect(Array.from(subscribeMessage(new TextEncoder().encode('kv')))).toEqual([0, 3, 1, 0x6b, 0x76]);
  });
});
