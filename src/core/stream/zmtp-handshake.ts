// The handshake of a ZMTP 3.0 subscriber with the NULL mechanism (ZeroMQ RFC 23/ZMTP), as kvsentinel speaks it to a
// KV-event publisher's PUB socket (libzmq in pyzmq: TensorRT-LLM, vLLM and SGLang). Each side sends a 64-byte
// greeting — signature FF, 8 padding bytes, 7F; version major and minor; the mechanism's name padded to 20 bytes;
// as-server; 31 bytes of filler — then a READY command whose metadata names its socket type. We greet as 3.0: a
// libzmq peer that greets 3.1 then speaks 3.0 to us, where a subscription is a message (01 and the topic) rather
// than 3.1's SUBSCRIBE command, and every libzmq since 4.0 takes both.

export const GREETING_BYTES = 64;

/** frame flags (ZMTP 3.0): more frames of this message follow; the size is 8 bytes; the frame is a command */
export const FLAG_MORE = 0x01;
export const FLAG_LONG = 0x02;
export const FLAG_COMMAND = 0x04;

const SIGNATURE_END = 9;
const VERSION_MAJOR = 10;
const VERSION_MINOR = 11;
const MECHANISM = 12;
const MECHANISM_BYTES = 20;
const AS_SERVER = 32;

const ascii = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0));
const latin1 = new TextDecoder('latin1');

/** Our greeting: ZMTP 3.0, NULL, as a client. */
export function subscriberGreeting(): Uint8Array {
  const g = new Uint8Array(GREETING_BYTES);
  g[0] = 0xff;
  g[SIGNATURE_END] = 0x7f;
  g[VERSION_MAJOR] = 3;
  g[VERSION_MINOR] = 0;
  g.set(ascii('NULL'), MECHANISM);
  g[AS_SERVER] = 0;
  return g;
}

export interface PeerGreeting {
  readonly major: number;
  readonly minor: number;
  readonly mechanism: string;
}

/**
 * Why the start of a greeting cannot be ZMTP's (its first byte, then its tenth), or null while it still can: a peer
 * that is not ZMQ (an HTTP server answering 400) often sends less than a greeting and closes.
 */
export function signatureProblem(start: Uint8Array): string | null {
  if (start.length > 0 && start[0] !== 0xff) return notZmtp(start);
  if (start.length > SIGNATURE_END && (start[SIGNATURE_END]! & 0x01) !== 1) return notZmtp(start);
  return null;
}

const notZmtp = (start: Uint8Array): string => `not a ZMTP greeting (it starts ${hex(start.subarray(0, 10))})`;

/** The peer's greeting, or why it is not one a ZMTP 3 NULL peer sends. */
export function readGreeting(g: Uint8Array): { ok: true; value: PeerGreeting } | { ok: false; reason: string } {
  if (g.length < GREETING_BYTES) return { ok: false, reason: `a greeting of ${g.length} bytes, expected 64` };
  const problem = signatureProblem(g);
  if (problem !== null) return { ok: false, reason: problem };
  const major = g[VERSION_MAJOR]!;
  const minor = g[VERSION_MINOR]!;
  if (major < 3) return { ok: false, reason: `ZMTP ${major}.${minor}: a libzmq older than 4.0, not supported` };
  const name = latin1.decode(g.subarray(MECHANISM, MECHANISM + MECHANISM_BYTES)).replace(/\0+$/, '');
  return { ok: true, value: { major, minor, mechanism: name } };
}

const hex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join(' ');

/** One frame on the wire: flags, size (1 byte, or 8 with FLAG_LONG), body. */
export function encodeFrame(flags: number, body: Uint8Array): Uint8Array {
  const long = body.length > 255;
  const head = long ? 9 : 2;
  const out = new Uint8Array(head + body.length);
  out[0] = flags | (long ? FLAG_LONG : 0);
  if (long) new DataView(out.buffer).setBigUint64(1, BigInt(body.length), false);
  else out[1] = body.length;
  out.set(body, head);
  return out;
}

/** A command's body: its name's length, its name, its data. */
function commandBody(name: string, data: Uint8Array): Uint8Array {
  const body = new Uint8Array(1 + name.length + data.length);
  body[0] = name.length;
  body.set(ascii(name), 1);
  body.set(data, 1 + name.length);
  return body;
}

/** READY with one property, Socket-Type (name length, name, value length as 4 bytes big-endian, value). */
export function readyCommand(socketType: string): Uint8Array {
  const name = 'Socket-Type';
  const data = new Uint8Array(1 + name.length + 4 + socketType.length);
  data[0] = name.length;
  data.set(ascii(name), 1);
  new DataView(data.buffer).setUint32(1 + name.length, socketType.length, false);
  data.set(ascii(socketType), 1 + name.length + 4);
  return encodeFrame(FLAG_COMMAND, commandBody('READY', data));
}

/** A ZMTP 3.0 subscription: one message, 01 then the topic prefix (empty: everything). */
export function subscribeMessage(topic: Uint8Array): Uint8Array {
  const body = new Uint8Array(1 + topic.length);
  body[0] = 1;
  body.set(topic, 1);
  return encodeFrame(0, body);
}

/** The answer to a heartbeat PING: PONG with the ping's context. */
export function pongCommand(context: Uint8Array): Uint8Array {
  return encodeFrame(FLAG_COMMAND, commandBody('PONG', context));
}

export interface Command {
  readonly name: string;
  readonly data: Uint8Array;
}

/** A command frame's body, or null when its name overruns it. */
export function readCommand(body: Uint8Array): Command | null {
  if (body.length < 1) return null;
  const size = body[0]!;
  if (1 + size > body.length) return null;
  return { name: latin1.decode(body.subarray(1, 1 + size)), data: body.subarray(1 + size) };
}

/** A READY command's metadata (property names are case-insensitive: kept lower-cased), or null when malformed. */
export function readMetadata(data: Uint8Array): Map<string, string> | null {
  const props = new Map<string, string>();
  let at = 0;
  while (at < data.length) {
    const nameSize = data[at]!;
    if (at + 1 + nameSize + 4 > data.length) return null;
    const name = latin1.decode(data.subarray(at + 1, at + 1 + nameSize)).toLowerCase();
    at += 1 + nameSize;
    const valueSize = ((data[at]! << 24) | (data[at + 1]! << 16) | (data[at + 2]! << 8) | data[at + 3]!) >>> 0;
    at += 4;
    if (at + valueSize > data.length) return null;
    props.set(name, latin1.decode(data.subarray(at, at + valueSize)));
    at += valueSize;
  }
  return props;
}

/** An ERROR command's reason (a size byte, then the text). */
export function errorReason(data: Uint8Array): string {
  const size = data[0] ?? 0;
  return latin1.decode(data.subarray(1, 1 + size));
}

/** A PING's context: after its 2-byte TTL, up to 16 bytes the PONG echoes. */
export function pingContext(data: Uint8Array): Uint8Array {
  return data.subarray(2, 2 + 16);
}

/** socket types a SUB may talk to */
export const PUBLISHER_TYPES: readonly string[] = ['PUB', 'XPUB'];
