// One SUB connection to a KV-event publisher's PUB socket, speaking ZMTP 3.0 over a Node socket (tcp:// or ipc://)
// rather than through zeromq.js: a chunk the kernel hands over holds hundreds of batches, read here in one loop,
// where zeromq.js costs a native call, three Buffers and a promise per message (at 50,000 batches/s that was a third
// of the sidecar's time; BENCHMARKS §10). It behaves as libzmq's SUB does: it connects, and reconnects every
// `reconnectMs` while nothing accepts or after the publisher went away; its queue holds `receiveHighWaterMark`
// messages, past which it stops reading, so the publisher's own high-water mark drops the newest batches (seq gaps,
// as before). Messages are handed on in order, a slice at a time, so the event loop reads the socket and serves the
// daemon between slices. What happens to a connection (its handshake, its end and why) is told in order with the
// messages: the pipeline sees every batch of an old life before it hears of the disconnect and the new one.
import net from 'node:net';
import {
  FLAG_COMMAND,
  FLAG_MORE,
  PUBLISHER_TYPES,
  errorReason,
  pingContext,
  pongCommand,
  readCommand,
  readGreeting,
  readMetadata,
  readyCommand,
  subscribeMessage,
  subscriberGreeting,
} from '../../core/stream/zmtp-handshake.js';
import { DEFAULT_MAX_FRAME_BYTES, ZmtpReader } from '../../core/stream/zmtp-reader.js';
import { MessageQueue } from './message-queue.js';
import { connectTarget, type ConnectTarget } from './zmq-endpoints.js';

export interface ZmtpSubscriberOptions {
  /** messages queued before the socket is read no more (libzmq's ZMQ_RCVHWM) */
  readonly receiveHighWaterMark: number;
  /** the wait before each new connection (libzmq's ZMQ_RECONNECT_IVL, 100 ms by default) */
  readonly reconnectMs: number;
  /** a peer that has not completed the handshake by then is left (libzmq's ZMQ_HANDSHAKE_IVL, 30 s) */
  readonly handshakeTimeoutMs: number;
  /** the wait before connecting again to a peer that is not a ZMQ publisher */
  readonly refusedRetryMs: number;
  /** a frame above this ends the connection as unreadable */
  readonly maxFrameBytes: number;
}

export const DEFAULT_ZMTP_OPTIONS: ZmtpSubscriberOptions = {
  receiveHighWaterMark: 100_000,
  reconnectMs: 100,
  handshakeTimeoutMs: 30_000,
  refusedRetryMs: 5_000,
  maxFrameBytes: DEFAULT_MAX_FRAME_BYTES,
};

export interface ZmtpSubscriberEvents {
  /** the handshake with the publisher completed (told in order with the messages) */
  handshake(): void;
  /** nothing accepted the connection (or it failed before a handshake): tried again */
  retry(reason: string): void;
  /** a connection that had completed its handshake ended (every event is told in order with the messages) */
  disconnect(): void;
  /** the peer is not a ZMQ publisher this subscriber can talk to (protocol, mechanism, socket type) */
  refused(reason: string): void;
  /** one whole message, its frames in order */
  message(frames: Uint8Array[]): void;
  /** the queue ran empty: the subscriber waits on the socket */
  idle(): void;
  /** a handler threw: the error is told and the next message handed on */
  failed(error: unknown): void;
}

/**
 * How long messages are handed on before the socket is read again. libzmq reads its socket on an I/O thread, but
 * here the socket is read between slices, and the kernel's receive buffer (128 KiB until TCP grows it) caps what
 * one read takes: with slices of 512 batches (15 ms) the take rate was bounded by the read rate, the queue stayed
 * empty and a 50,000/s burst overflowed the publisher's queue instead (BENCHMARKS §10).
 */
const SLICE_MS = 1;
/** and at most this many messages per slice (zeromq.js reads 512 in a row before it yields) */
const SLICE_MAX = 512;
/** a live message has 3 frames; frames past this bound are not kept (the message is then malformed anyway) */
const MAX_FRAMES = 16;

/** Why a connection closed before the handshake, by how far it got: libzmq closes at once on what it refuses. */
function closedBefore(received: number, greeted: boolean): string {
  if (received === 0)
    return 'the peer closed the connection before its greeting (not a ZMQ socket, or one that wants a security mechanism other than NULL?)';
  if (!greeted)
    return 'the publisher closed the connection during the greeting (it wants a security mechanism other than NULL?)';
  return 'the publisher closed the connection during the handshake (a socket type a SUB cannot talk to?)';
}

export class ZmtpSubscriber {
  readonly #target: ConnectTarget;
  readonly #topic: Uint8Array;
  readonly #options: ZmtpSubscriberOptions;
  readonly #events: ZmtpSubscriberEvents;
  #socket: net.Socket | null = null;
  #timer: NodeJS.Timeout | null = null;
  #closed = false;
  /** messages, and what happened to a connection (its handshake, its end), told in order with them */
  readonly #queue = new MessageQueue();
  #draining = false;
  #paused = false;

  constructor(endpoint: string, topic: string, options: ZmtpSubscriberOptions, events: ZmtpSubscriberEvents) {
    this.#target = connectTarget(endpoint);
    this.#topic = new TextEncoder().encode(topic);
    this.#options = options;
    this.#events = events;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** messages queued behind the one being handled */
  get queued(): number {
    return this.#queue.length;
  }

  /**
   * More messages wait (the backlog's look at the queue): queued ones, or, while reading is paused at the high-water
   * mark, those the kernel holds. An empty queue while reading is on means the last read took all the kernel had.
   */
  get readable(): boolean {
    return this.queued > 0 || this.#paused;
  }

  connect(): void {
    if (this.#closed || this.#socket !== null) return;
    const socket = net.connect(this.#target);
    this.#socket = socket;
    let greeted = false;
    let received = 0;
    let handshaken = false;
    let refusal: string | null = null;
    let failure: string | null = null;
    const frames: Uint8Array[] = []; // reused: the queue keeps where the frames lie, not the array
    let frameCount = 0;
    const refuse = (reason: string): void => {
      refusal ??= reason;
      socket.destroy();
    };
    const handshakeTimer = setTimeout(
      () => refuse(`no ZMTP handshake within ${this.#options.handshakeTimeoutMs / 1000} s`),
      this.#options.handshakeTimeoutMs,
    );
    handshakeTimer.unref();
    const reader = new ZmtpReader(
      {
        greeting: (bytes) => {
          if (refusal !== null) return;
          const g = readGreeting(bytes);
          if (!g.ok) return refuse(g.reason);
          if (g.value.mechanism !== 'NULL')
            return refuse(
              `the publisher asks for the ${g.value.mechanism} security mechanism; only NULL is spoken here`,
            );
          greeted = true;
          // each step waits for the peer's: libzmq sometimes drops a connection whose READY came with its greeting
          socket.write(readyCommand('SUB'));
        },
        frame: (flags, body) => {
          // the rest of a chunk that held what was refused
          if (refusal !== null) return;
          if ((flags & FLAG_COMMAND) !== 0) {
            const command = readCommand(body);
            if (command === null) return refuse('a command frame whose name overruns it');
            if (!handshaken) {
              if (command.name === 'ERROR')
                return refuse(`the publisher refused the handshake: ${errorReason(command.data)}`);
              if (command.name !== 'READY') return refuse(`a ${command.name} command before READY`);
              const type = readMetadata(command.data)?.get('socket-type') ?? '(none)';
              if (!PUBLISHER_TYPES.includes(type)) return refuse(`the peer is a ${type} socket, not a publisher`);
              handshaken = true;
              clearTimeout(handshakeTimer);
              socket.write(subscribeMessage(this.#topic));
              this.#enqueue(null, () => this.#events.handshake());
            } else if (command.name === 'PING') socket.write(pongCommand(pingContext(command.data)));
            return;
          }
          if (!handshaken) return refuse('a message before the handshake');
          if (frameCount++ < MAX_FRAMES) frames.push(body);
          if ((flags & FLAG_MORE) !== 0) return;
          this.#enqueue(frames, null);
          frames.length = 0;
          frameCount = 0;
        },
      },
      this.#options.maxFrameBytes,
    );
    socket.on('connect', () => {
      socket.setNoDelay(true);
      socket.write(subscriberGreeting());
    });
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (!reader.push(chunk)) refuse(reader.error ?? 'unreadable stream');
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      failure ??= err.code ?? err.message;
    });
    socket.on('close', () => {
      clearTimeout(handshakeTimer);
      if (this.#socket === socket) this.#socket = null;
      if (this.#closed) return;
      this.#enqueue(null, () => {
        // a connection refused after its handshake (a frame above the bound) was a connection too: it ended
        if (handshaken) this.#events.disconnect();
        if (refusal !== null) this.#events.refused(refusal);
        else if (!handshaken) this.#events.retry(failure ?? closedBefore(received, greeted));
      });
      this.#later(refusal !== null ? this.#options.refusedRetryMs : this.#options.reconnectMs);
    });
    if (this.#paused) socket.pause();
  }

  close(): void {
    this.#closed = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#socket?.destroy();
    this.#socket = null;
    this.#queue.clear();
  }

  #later(ms: number): void {
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.connect();
    }, ms);
  }

  #enqueue(message: Uint8Array[] | null, call: (() => void) | null): void {
    if (message !== null) this.#queue.pushMessage(message);
    else if (call !== null) this.#queue.pushCall(call);
    if (this.queued >= this.#options.receiveHighWaterMark && !this.#paused) {
      this.#paused = true;
      this.#socket?.pause();
    }
    if (!this.#draining) {
      this.#draining = true;
      setImmediate(this.#drain);
    }
  }

  readonly #drain = (): void => {
    if (this.#closed) return;
    const queue = this.#queue;
    const deadline = performance.now() + SLICE_MS;
    for (let n = 0; n < SLICE_MAX; n++) {
      const entry = queue.shift();
      if (entry === undefined) break;
      try {
        if (typeof entry === 'function') entry();
        else this.#events.message(entry);
      } catch (err) {
        this.#events.failed(err);
      }
      if (this.#closed) return;
      if (performance.now() >= deadline) break;
    }
    if (this.#paused && this.queued < this.#options.receiveHighWaterMark) {
      this.#paused = false;
      this.#socket?.resume();
    }
    if (this.queued > 0) setImmediate(this.#drain);
    else {
      this.#draining = false;
      this.#events.idle();
    }
  };
}
