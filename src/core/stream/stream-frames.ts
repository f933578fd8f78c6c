// ZMQ framing of KV-event streams, identical in TensorRT-LLM, vLLM and SGLang (their ZmqEventPublisher):
// live messages on the PUB socket are [topic, seq (8 bytes, big-endian unsigned), msgpack batch]; the replay
// ROUTER answers a DEALER's ["", start_seq (8 bytes BE)] with one message per buffered batch with seq ≥ start —
// ["", topic, seq, payload] (TensorRT-LLM) or ["", seq, payload] (vLLM, SGLang) — then an end marker whose seq is
// -1 as signed 8 bytes: ["", "", -1, ""] or ["", -1, ""]. Both replay forms are read without knowing the engine.
// vLLM with `snapshot_endpoint` names its publisher's life with a 16-byte id: its first build of that mode appended
// it to the live sequence frame (24 bytes: seq, then id; replay frames stayed 8), the current one puts it last in the
// batch payload (`IdentifiedKVEventBatch`, read by decode-batch.ts) and keeps 8-byte frames. Both are read here.
import type { WireIssue } from '../wire/wire-issue.js';
import type { WireIssueCode } from '../wire/wire-issue-codes.js';

export interface StreamMessage {
  readonly topic: string;
  readonly seq: bigint;
  /** the publisher life's id when the sequence frame carries one (vLLM snapshot mode, first build), else null */
  readonly publisherId: Uint8Array | null;
  readonly payload: Uint8Array;
}

interface SeqFrame {
  readonly seq: bigint;
  readonly publisherId: Uint8Array | null;
}

/** bytes of a sequence frame: the u64 alone, or followed by vLLM's 16-byte publisher id */
const SEQ_BYTES = 8;
const SEQ_WITH_ID_BYTES = 24;

export type FrameDecode<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly issue: WireIssue };

const END_SEQ = 0xffff_ffff_ffff_ffffn;

function issue(code: WireIssueCode, message: string, path: string): { ok: false; issue: WireIssue } {
  return { ok: false, issue: { code, message, path, offset: null } };
}

function readSeq(frame: Uint8Array, path: string): FrameDecode<SeqFrame> {
  if (frame.length !== SEQ_BYTES && frame.length !== SEQ_WITH_ID_BYTES)
    return issue(
      'stream-bad-seq',
      `${path}: the sequence frame has ${frame.length} bytes, expected 8 (u64 big-endian) or 24 (u64 and a 16-byte publisher id)`,
      path,
    );
  const publisherId = frame.length === SEQ_WITH_ID_BYTES ? frame.slice(SEQ_BYTES) : null;
  return { ok: true, value: { seq: seqOf(frame), publisherId } };
}

/**
 * The u64 of a frame's first 8 bytes (big-endian), read as two 32-bit halves: every message has one, and a DataView
 * over a received frame reaches for its ArrayBuffer, which V8 materialises for small buffers.
 */
function seqOf(frame: Uint8Array): bigint {
  const hi = ((frame[0]! << 24) | (frame[1]! << 16) | (frame[2]! << 8) | frame[3]!) >>> 0;
  const lo = ((frame[4]! << 24) | (frame[5]! << 16) | (frame[6]! << 8) | frame[7]!) >>> 0;
  // below 2^53 (every seq a publisher reaches) one exact double makes the BigInt
  return hi < 0x20_0000 ? BigInt(hi * 2 ** 32 + lo) : (BigInt(hi) << 32n) | BigInt(lo);
}

const utf8 = new TextDecoder('utf-8', { fatal: false });

/** A topic frame's text (most publishers send the empty topic: nothing to decode). */
const topicOf = (frame: Uint8Array): string => (frame.length === 0 ? '' : utf8.decode(frame));

/** A live PUB message: exactly [topic, seq, payload]. */
export function decodeLiveMessage(frames: readonly Uint8Array[]): FrameDecode<StreamMessage> {
  if (frames.length !== 3)
    return issue(
      'stream-bad-frames',
      `a live message has ${frames.length} frames, expected 3 ([topic, seq, payload])`,
      'frames',
    );
  const seq = readSeq(frames[1]!, 'frames[1]');
  if (!seq.ok) return seq;
  const { seq: value, publisherId } = seq.value;
  return { ok: true, value: { topic: topicOf(frames[0]!), seq: value, publisherId, payload: frames[2]! } };
}

/** One replay reply as a DEALER receives it: a batch, or the end marker (null). */
export function decodeReplayMessage(frames: readonly Uint8Array[]): FrameDecode<StreamMessage | null> {
  // the leading empty delimiter frame the ROUTER sends back
  const rest = frames.length > 0 && frames[0]!.length === 0 ? frames.slice(1) : frames;
  let topic = '';
  let seqFrame: Uint8Array;
  let payload: Uint8Array;
  if (rest.length === 3) {
    topic = topicOf(rest[0]!);
    seqFrame = rest[1]!;
    payload = rest[2]!;
  } else if (rest.length === 2) {
    seqFrame = rest[0]!;
    payload = rest[1]!;
  } else {
    return issue(
      'stream-bad-frames',
      `a replay reply has ${frames.length} frames, expected ["", topic, seq, payload] or ["", seq, payload]`,
      'frames',
    );
  }
  const seq = readSeq(seqFrame, 'replay.seq');
  if (!seq.ok) return seq;
  if (seq.value.seq === END_SEQ) return { ok: true, value: null };
  return { ok: true, value: { topic, ...seq.value, payload } };
}

/** The request a DEALER sends to the replay ROUTER: ["", start_seq as 8 bytes big-endian]. */
export function replayRequest(fromSeq: bigint): Uint8Array[] {
  const seq = new Uint8Array(8);
  new DataView(seq.buffer).setBigUint64(0, BigInt.asUintN(64, fromSeq), false);
  return [new Uint8Array(0), seq];
}

/** Encodes a seq frame (the simulator's publisher and tests), with vLLM's publisher id after it when given. */
export function encodeSeq(seq: bigint, publisherId: Uint8Array | null = null): Uint8Array {
  const out = new Uint8Array(publisherId === null ? SEQ_BYTES : SEQ_BYTES + publisherId.length);
  new DataView(out.buffer).setBigUint64(0, BigInt.asUintN(64, seq), false);
  if (publisherId !== null) out.set(publisherId, SEQ_BYTES);
  return out;
}

/** The end-of-replay seq frame: -1 as signed 8 bytes. */
export const END_SEQ_FRAME: Uint8Array = encodeSeq(END_SEQ);
