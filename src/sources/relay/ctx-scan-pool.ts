// Reads CTX request bodies (JSON or msgpack) and CTX responses on a worker thread, so the relay's event loop only
// forwards bytes (design: the relay must never hold the data path for analysis). A request's chunks are kept by
// reference as they pass and go over once its body ended, copied into a ring of shared memory the thread reads in
// place (no allocation on the event loop, nothing for its GC; when the ring is full — the thread lags — the body waits
// for room, and only a body larger than the whole ring travels in a buffer of its own); the thread answers with the
// request info and the prompt's fingerprints for the decision digest, the prompt's ids in a second shared ring
// (prompt-id-ring.ts: a view of it is the info's promptTokens, no buffer of its own per request). A response's kept
// copy goes over whole once it ended.
// Everything sent in one tick goes in one message, since each message wakes the thread (a syscall, and at a low rate
// the largest cost here), and the thread answers a batch in one message too.
//
// When the thread cannot be used (its compiled file is missing, as when the sources run untranspiled under the test
// runner, or the thread died) scanning happens inline with the same scanner: same answers, on the event loop.
// Every slow path taken (inline, a copy past the ring, ids past the id ring, a kernel that copies or is missing, the
// text path) is counted in `fallbacks` (kvsentinel_relay_scan_fallbacks_total).
import { KvsentinelError } from '../../core/errors.js';
import { Buffer } from 'node:buffer';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { CtxBodyEncoding } from '../../core/relay/ctx-body-encoding.js';
import { CtxScanScratch } from '../../core/relay/ctx-request-scanner.js';
import { correlationHeaders, type CtxRequestInfo, type HeaderBag } from '../../core/relay/ctx-request.js';
import { parseCtxResponse, type CtxResponseInfo, type CtxResponseShape } from '../../core/relay/ctx-response.js';
import type {
  ScanKernelForm,
  ScanMessage,
  ScanReply,
  ScanRequest,
  ScanThreadData,
  ScanThreadMessage,
} from './ctx-scan-thread.js';
import { InlineScan } from './inline-scan.js';
import { ScanFallbacks } from './scan-fallbacks.js';
import { createPromptIdRingMemory, PromptIdRingReader } from './prompt-id-ring.js';
import { ID_RUN_KERNEL_BYTES } from '../../core/relay/id-run-kernel.js';
import { sharedWasmMemory, WASM_PAGE_BYTES } from '../../core/wasm/wasm-binary.js';

/** What a scan read: the request info, and the prompt's fingerprints when the thread computed them. */
export interface ScannedRequest {
  readonly info: CtxRequestInfo;
  /** promptFingerprints(info.promptTokens), for the decision (null: the digest computes them) */
  readonly promptFingerprints: Uint32Array | null;
}

/** One request's scan: feed every chunk, then finish once (or drop). */
export interface CtxScan {
  /** `chunk` is read (copied) when finish() is called: its bytes must not change until then (socket chunks do not) */
  feed(chunk: Uint8Array): void;
  /** what the scan read; null when the body needs parseCtxRequest's text path */
  finish(headers: HeaderBag): Promise<ScannedRequest | null>;
  drop(): void;
}

/** A request body that ended, with what its finish message needs. */
interface EndedBody {
  readonly id: number;
  readonly encoding: CtxBodyEncoding;
  readonly chunks: readonly Uint8Array[];
  readonly bytes: number;
  readonly headers: HeaderBag;
}

const THREAD_FILE = fileURLToPath(new URL('./ctx-scan-thread.js', import.meta.url));
/**
 * the shared ring's size: bounded memory whatever the load; a lagging thread makes ended bodies wait for room. 32 MB:
 * with 256 requests of 200 KB in flight an 8 MB ring overflowed at saturation, and each body past it went over in a
 * 200 KB copy of its own (an allocation on the event loop, a copy into the kernel on the thread)
 */
const RING_BYTES = 32 * 1024 * 1024;
/**
 * the id ring's slots (32 MB): the ids of ~256 prompts of 32K tokens. V8 frees views only in its full collections,
 * which came every ~300 requests at saturation in the relay benchmark: 16 MB left half the prompts' ids to travel on
 * their own, 32 MB a fifth, 64 MB none.
 */
const ID_RING_SLOTS = 8 * 1024 * 1024;

export class CtxScanPool {
  readonly #useThread: boolean;
  #worker: Worker | null = null;
  #failed = false;
  #nextId = 0;
  readonly #pending = new Map<number, (reply: ScanReply | undefined) => void>();
  /** messages for the thread, posted together once per tick */
  #outbox: ScanMessage[] = [];
  #outboxTransfer: ArrayBuffer[] = [];
  #scheduled = false;
  /** the ring: bytes the event loop writes, and how far the thread has read (a byte count since the start) */
  #ring: Uint8Array | null = null;
  #ringRead: BigInt64Array | null = null;
  #ringWritten = 0;
  /** ended bodies waiting for room in the ring, in the order they ended: at most one ring's worth of bytes */
  #parked: EndedBody[] = [];
  #parkedBytes = 0;
  readonly #idRingSlots: number;
  readonly #ringBytes: number;
  /** views of the ids the thread placed in the id ring (null: no thread yet); outlives a thread that died, harmless */
  #idRing: PromptIdRingReader | null = null;
  #idsInRing = 0;
  #idsTransferred = 0;
  /** the id kernel and scratch of scans run inline (made on the first one) */
  #inlineScratch: CtxScanScratch | null = null;
  /** the slow paths taken, by reason (cumulative, over every thread this pool started) */
  readonly fallbacks: ScanFallbacks;
  /** how the running thread's id kernel reads (it says so first) */
  #threadKernel: ScanKernelForm = 'in-place';

  /**
   * `thread: false` scans inline (and so does a missing thread file); `ringBytes` (a multiple of 64 KiB) and
   * `idRingSlots` size the body and id rings (tests); `fallbacks` counts the slow paths (default: counted only).
   */
  constructor(options: { thread: boolean; ringBytes?: number; idRingSlots?: number; fallbacks?: ScanFallbacks }) {
    this.fallbacks = options.fallbacks ?? new ScanFallbacks(null, 'scan pool');
    this.#useThread = options.thread && existsSync(THREAD_FILE);
    this.#idRingSlots = options.idRingSlots ?? ID_RING_SLOTS;
    this.#ringBytes = options.ringBytes ?? RING_BYTES;
    // the thread finds the ring's end as the memory's size less the kernel's bytes: whole pages only
    if (!Number.isInteger(this.#ringBytes / WASM_PAGE_BYTES) || this.#ringBytes <= 0)
      throw new KvsentinelError('internal', `scan ring of ${this.#ringBytes} bytes: a positive multiple of 64 KiB`);
  }

  /** True while scans run on the worker thread. */
  get threaded(): boolean {
    return this.#useThread && !this.#failed;
  }

  open(encoding: CtxBodyEncoding): CtxScan {
    const worker = this.#ensureWorker();
    if (worker === null) {
      this.fallbacks.count('inline');
      return new InlineScan(encoding, (this.#inlineScratch ??= new CtxScanScratch()), this.fallbacks);
    }
    const id = ++this.#nextId;
    // the chunks travel once the body ended, in one copy and one message with the finish (the relay forwarded the
    // originals meanwhile and keeps them for its capture anyway)
    let queued: Uint8Array[] = [];
    let queuedBytes = 0;
    return {
      feed: (chunk) => {
        queued.push(chunk);
        queuedBytes += chunk.length;
      },
      finish: (headers) =>
        new Promise((resolve, reject) => {
          // a thread that died: the relay rescans from its capture
          if (this.#failed) {
            reject(new KvsentinelError('cancelled', 'scan thread stopped'));
            return;
          }
          this.#pending.set(id, (reply) => {
            if (reply?.kind !== 'request') {
              reject(new KvsentinelError('cancelled', 'scan thread stopped'));
              return;
            }
            if (encoding === 'json') this.#countKernel();
            if (reply.info === null) this.fallbacks.count('text_path');
            resolve(reply.info === null ? null : { info: reply.info, promptFingerprints: reply.promptFingerprints });
          });
          // the headers the info reads, no more: the bag is cloned to the thread
          this.#submit({ id, encoding, chunks: queued, bytes: queuedBytes, headers: correlationHeaders(headers) });
          queued = [];
          queuedBytes = 0;
        }),
      drop: () => {
        queued = [];
        queuedBytes = 0;
        // nothing was sent for it: the thread never heard of this request
      },
    };
  }

  /**
   * Sends an ended body and its finish: through the ring when it has room; when it has none (the thread lags), the
   * body waits, in order, until the thread's next answers free room (its chunks are the relay's own, kept for its
   * capture anyway, so waiting costs no memory and no copy). Waiting is bounded to a ring's worth: past it, and for a
   * body larger than the whole ring, bodies go over in a copy of their own (the thread's inbox then holds them, as it
   * did before bodies waited) — else at saturation the bodies waiting and their exchanges grew without bound.
   */
  #submit(body: EndedBody): void {
    // the room the thread freed since its last answer (it reads ahead of its messages)
    this.#sendParked();
    if (this.#parked.length > 0 || !this.#sendThroughRing(body)) {
      if (body.bytes <= this.#ringBytes) {
        this.#parked.push(body);
        this.#parkedBytes += body.bytes;
        // bounded: waiting only pays while the thread keeps up; past a ring's worth waiting (ring room comes back one
        // answer round trip at a time, slower than the relay forwards) the oldest go over in a copy of their own
        while (this.#parkedBytes > this.#ringBytes) this.#sendCopy(this.#unpark());
        return;
      }
      this.#sendCopy(body);
      return;
    }
    this.#post({ kind: 'finish', id: body.id, encoding: body.encoding, headers: body.headers }, []);
  }

  /** @internal bytes of ended bodies waiting for ring room (tests) */
  get parkedBytes(): number {
    return this.#parkedBytes;
  }

  /** @internal how the thread's answers carried requests' prompt ids: viewed in the id ring, or transferred (tests) */
  get idDelivery(): { readonly ring: number; readonly transferred: number; readonly held: number } {
    return { ring: this.#idsInRing, transferred: this.#idsTransferred, held: this.#idRing?.held ?? 0 };
  }

  #unpark(): EndedBody {
    const body = this.#parked.shift()!;
    this.#parkedBytes -= body.bytes;
    return body;
  }

  #sendCopy(body: EndedBody): void {
    this.fallbacks.count('body_copy');
    // never pooled (it is transferred) and not zero-filled first: every byte is written below
    const copy = Buffer.allocUnsafeSlow(body.bytes);
    let at = 0;
    for (const c of body.chunks) {
      copy.set(c, at);
      at += c.length;
    }
    this.#post({ kind: 'chunk', id: body.id, encoding: body.encoding, bytes: copy }, [copy.buffer]);
    this.#post({ kind: 'finish', id: body.id, encoding: body.encoding, headers: body.headers }, []);
  }

  #sendThroughRing(body: EndedBody): boolean {
    if (body.bytes === 0) return true;
    const start = this.#toRing(body.chunks, body.bytes);
    if (start === null) return false;
    this.#post({ kind: 'ring-chunk', id: body.id, encoding: body.encoding, start, length: body.bytes }, []);
    return true;
  }

  /** Bodies that waited for room, sent as the thread's answers free it. */
  #sendParked(): void {
    while (this.#parked.length > 0 && !this.#failed) {
      const body = this.#parked[0]!;
      if (!this.#sendThroughRing(body)) return;
      this.#unpark();
      this.#post({ kind: 'finish', id: body.id, encoding: body.encoding, headers: body.headers }, []);
    }
  }

  /** Parses a CTX response's kept bytes (on the thread when it runs; `bytes` is handed over and must not be reused). */
  response(bytes: Uint8Array, shape: CtxResponseShape): Promise<CtxResponseInfo> {
    const worker = this.#ensureWorker();
    if (worker === null) {
      this.fallbacks.count('inline');
      return Promise.resolve(parseCtxResponse(bytes, shape));
    }
    const id = ++this.#nextId;
    return new Promise((resolve) => {
      // a thread that died meanwhile: parse here instead
      this.#pending.set(id, (reply) =>
        resolve(reply?.kind === 'response' ? reply.info : parseCtxResponse(bytes, shape)),
      );
      // a view of a larger buffer (a small Buffer is a slice of Node's shared pool) goes as a copy of its own bytes:
      // Buffer's slice() is a view, which would clone the whole pool (the pool itself cannot be transferred)
      const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
      const copy = owned ? bytes : new Uint8Array(bytes);
      this.#post({ kind: 'response', id, bytes: copy, shape }, [copy.buffer as ArrayBuffer]);
    });
  }

  /** Copies `chunks` into the ring when they fit in what the thread has read; their start position, else null. */
  #toRing(chunks: readonly Uint8Array[], bytes: number): number | null {
    const ring = this.#ring;
    const read = this.#ringRead;
    if (ring === null || read === null) return null;
    const start = this.#ringWritten;
    if (bytes > this.#ringBytes - (start - Number(Atomics.load(read, 0)))) return null;
    let at = start % this.#ringBytes;
    for (const c of chunks) {
      let from = 0;
      while (from < c.length) {
        const n = Math.min(c.length - from, this.#ringBytes - at);
        ring.set(from === 0 && n === c.length ? c : c.subarray(from, from + n), at);
        from += n;
        at = (at + n) % this.#ringBytes;
      }
    }
    this.#ringWritten = start + bytes;
    return start;
  }

  #post(m: ScanMessage, transfer: ArrayBuffer[]): void {
    this.#outbox.push(m);
    this.#outboxTransfer.push(...transfer);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      const items = this.#outbox;
      const transfer = this.#outboxTransfer;
      this.#outbox = [];
      this.#outboxTransfer = [];
      const worker = this.#worker;
      // a thread that died meanwhile: the pending answers were failed already (failAll)
      if (items.length === 0 || worker === null || this.#failed) return;
      worker.postMessage(items.length === 1 ? items[0] : ({ kind: 'batch', items } satisfies ScanRequest), transfer);
    });
  }

  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = null;
    this.#failed = true;
    this.#failAll();
    if (worker !== null) await worker.terminate();
  }

  #ensureWorker(): Worker | null {
    if (!this.threaded) return null;
    if (this.#worker !== null) return this.#worker;
    // a shared WebAssembly memory where there is one: the thread's id kernel then reads the ring in place
    const memory = sharedWasmMemory(this.#ringBytes + ID_RUN_KERNEL_BYTES);
    const ring =
      memory === null
        ? { bytes: new SharedArrayBuffer(this.#ringBytes), kernel: null }
        : { bytes: null, kernel: memory };
    const read = new SharedArrayBuffer(8);
    const ids = createPromptIdRingMemory(this.#idRingSlots);
    const worker = new Worker(THREAD_FILE, { workerData: { ring, read, ids } satisfies ScanThreadData });
    this.#ring = new Uint8Array(memory?.buffer ?? ring.bytes!, 0, this.#ringBytes);
    this.#ringRead = new BigInt64Array(read);
    this.#ringWritten = 0;
    const idRing = new PromptIdRingReader(ids);
    this.#idRing = idRing;
    worker.unref();
    worker.on('message', (message: ScanThreadMessage) => {
      if (message.kind === 'kernel') {
        this.#threadKernel = message.form;
        return;
      }
      for (const reply of message.kind === 'batch' ? message.items : [message]) {
        const done = this.#pending.get(reply.id);
        this.#pending.delete(reply.id);
        done?.(this.#withRingIds(reply, idRing));
      }
      // the thread read what it answered: its room in the ring is free again
      this.#sendParked();
    });
    const fail = (): void => {
      // the scans it still owed are read again on the event loop (close() answered its own before this)
      this.fallbacks.count('thread_stopped', this.#pending.size);
      this.#failed = true;
      this.#worker = null;
      this.#ring = null;
      this.#ringRead = null;
      this.#failAll();
    };
    worker.on('error', fail);
    worker.on('exit', fail);
    this.#worker = worker;
    return worker;
  }

  /**
   * An answer with its ids viewed where the thread placed them, in the order of the answers (the order the thread
   * placed them). One nobody waits for is not viewed: nothing reads it, and the release of the next view frees its
   * room too.
   */
  #withRingIds(reply: Exclude<ScanReply, { kind: 'batch' }>, ring: PromptIdRingReader): typeof reply {
    if (reply.kind === 'response') {
      if (reply.ringIds === null) {
        if (reply.info.workerPromptTokens !== null) this.fallbacks.count('ids_transferred');
        return reply;
      }
      const workerPromptTokens = ring.view(reply.ringIds.buffer, reply.ringIds);
      return { ...reply, info: { ...reply.info, workerPromptTokens }, ringIds: null };
    }
    if (reply.info === null) return reply;
    if (reply.ringIds === null) {
      if (reply.info.promptTokens !== null) {
        this.#idsTransferred++;
        this.fallbacks.count('ids_transferred');
      }
      return reply;
    }
    this.#idsInRing++;
    const promptTokens = ring.view(reply.ringIds.buffer, reply.ringIds);
    return { ...reply, info: { ...reply.info, promptTokens }, ringIds: null };
  }

  /** a JSON body the thread's kernel read: counted when that kernel is a slow one */
  #countKernel(): void {
    if (this.#threadKernel === 'none') this.fallbacks.count('no_kernel');
    else if (this.#threadKernel === 'copy') this.fallbacks.count('kernel_copy');
  }

  #failAll(): void {
    this.#parked = [];
    this.#parkedBytes = 0;
    for (const done of this.#pending.values()) done(undefined);
    this.#pending.clear();
  }
}
