// The worker-thread side of CtxScanPool: one body reader per open request (by its encoding), fed the chunks the relay
// copies over, answered with the request info when the request's body ended; and CTX responses parsed whole (usage and
// the worker's prompt token ids), off the relay's event loop. Prompt ids, the request's and the worker's, are written
// into the shared id ring when it has room (the reply says where), else transferred (not copied).
import { writeFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import type { CtxBodyEncoding } from '../../core/relay/ctx-body-encoding.js';
import { createCtxBodyReader, type CtxBodyReader } from '../../core/relay/ctx-body-reader.js';
import type { CtxRequestInfo, HeaderBag } from '../../core/relay/ctx-request.js';
import { parseCtxResponse, type CtxResponseInfo, type CtxResponseShape } from '../../core/relay/ctx-response.js';
import { promptFingerprints } from '../../core/state/incremental-keys.js';
import { bindIdRunKernel, ID_RUN_KERNEL_BYTES } from '../../core/relay/id-run-kernel.js';
import { CtxScanScratch } from '../../core/relay/ctx-request-scanner.js';
import type { WasmMemory } from '../../core/wasm/wasm-binary.js';
import { PromptIdRingWriter, type PromptIdRingMemory, type RingIds } from './prompt-id-ring.js';

/**
 * The ring CtxScanPool copies request chunks into, the count of its bytes this thread has read, and the ring this
 * thread writes prompts' ids into.
 */
export interface ScanThreadData {
  /**
   * RING_BYTES of bytes; as a shared WebAssembly memory (`kernel`), the id kernel's own bytes follow them and it reads
   * the ring in place
   */
  readonly ring:
    | { readonly bytes: SharedArrayBuffer; readonly kernel: null }
    | { readonly bytes: null; readonly kernel: WasmMemory };
  readonly read: SharedArrayBuffer;
  readonly ids: PromptIdRingMemory;
}

export type ScanRequest =
  | { readonly kind: 'chunk'; readonly id: number; readonly encoding: CtxBodyEncoding; readonly bytes: Uint8Array }
  /** `length` bytes at ring position `start` (a byte count since the start; wraps around the ring) */
  | {
      readonly kind: 'ring-chunk';
      readonly id: number;
      readonly encoding: CtxBodyEncoding;
      readonly start: number;
      readonly length: number;
    }
  | { readonly kind: 'finish'; readonly id: number; readonly encoding: CtxBodyEncoding; readonly headers: HeaderBag }
  | { readonly kind: 'response'; readonly id: number; readonly bytes: Uint8Array; readonly shape: CtxResponseShape }
  /** what the relay sent in one tick */
  | { readonly kind: 'batch'; readonly items: readonly ScanMessage[] };

/** one message of a batch */
export type ScanMessage = Exclude<ScanRequest, { kind: 'batch' }>;

/** where ids are in the id ring, and the ring's memory (the pool views them on the buffer object its message brings) */
export type RingIdsReply = RingIds & { readonly buffer: SharedArrayBuffer };

type OneReply =
  /**
   * info null: the body needs parseCtxRequest's text path; the prompt's fingerprints when it has ids; `ringIds`: the
   * prompt's ids in the id ring (info.promptTokens is null then), null when they travel in info
   */
  | {
      readonly kind: 'request';
      readonly id: number;
      readonly info: CtxRequestInfo | null;
      readonly promptFingerprints: Uint32Array | null;
      readonly ringIds: RingIdsReply | null;
    }
  /** `ringIds`: the worker's prompt ids in the id ring (info.workerPromptTokens is null then) */
  | {
      readonly kind: 'response';
      readonly id: number;
      readonly info: CtxResponseInfo;
      readonly ringIds: RingIdsReply | null;
    };

/** the answers to one message, together */
export type ScanReply = OneReply | { readonly kind: 'batch'; readonly items: readonly OneReply[] };

/**
 * How the thread's id kernel reads JSON bodies: the ring in place (a shared WebAssembly memory), its bytes copied into
 * the kernel first (no shared WebAssembly memory), or no kernel (no WebAssembly: byte by byte). Sent once, first.
 */
export type ScanKernelForm = 'in-place' | 'copy' | 'none';

/** what the thread sends: its kernel's form once, then answers */
export type ScanThreadMessage = ScanReply | { readonly kind: 'kernel'; readonly form: ScanKernelForm };

/** The thread's name in `top -H` and /proc (the benchmark splits the relay's CPU by thread with it); Linux only. */
export const SCAN_THREAD_NAME = 'kvs-scan';

/** The ring's bytes, and the thread's scan scratch (its kernel bound to the ring's memory when that is a WebAssembly one). */
function ringOf(data: ScanThreadData | null): { ring: Uint8Array; scratch: CtxScanScratch; form: ScanKernelForm } {
  const own = (ring: Uint8Array) => {
    const scratch = new CtxScanScratch();
    return { ring, scratch, form: scratch.kernel === null ? ('none' as const) : ('copy' as const) };
  };
  if (data === null) return own(new Uint8Array(0));
  const { bytes, kernel } = data.ring;
  if (bytes !== null) return own(new Uint8Array(bytes));
  const ringBytes = kernel.buffer.byteLength - ID_RUN_KERNEL_BYTES;
  const ring = new Uint8Array(kernel.buffer, 0, ringBytes);
  const bound = bindIdRunKernel(kernel, ringBytes);
  return bound === null ? own(ring) : { ring, scratch: new CtxScanScratch(bound), form: 'in-place' };
}

const port = parentPort;
if (port !== null) {
  try {
    writeFileSync('/proc/thread-self/comm', SCAN_THREAD_NAME);
  } catch {
    // not Linux, or /proc not mounted: the name is only a convenience
  }
  const open = new Map<number, CtxBodyReader>();
  const data = workerData as ScanThreadData | null;
  const { ring, scratch, form } = ringOf(data);
  // before any answer: the pool counts each JSON body a slow kernel read
  port.postMessage({ kind: 'kernel', form } satisfies ScanThreadMessage);
  const read = data === null ? new BigInt64Array(1) : new BigInt64Array(data.read);
  const idRing = data === null ? null : new PromptIdRingWriter(data.ids);
  /** `ids` in the id ring when it has room (the ids stay out of the message), else null (they travel on their own) */
  const toRing = (ids: Uint32Array | null): RingIdsReply | null => {
    if (ids === null) return null;
    const placed = data === null || idRing === null ? null : idRing.place(ids);
    if (placed === null || data === null) {
      transfer.push(ids.buffer as ArrayBuffer);
      return null;
    }
    return { ...placed, buffer: data.ids.ids };
  };
  const readerOf = (id: number, encoding: CtxBodyEncoding): CtxBodyReader => {
    let reader = open.get(id);
    if (reader === undefined) {
      reader = createCtxBodyReader(encoding, scratch);
      open.set(id, reader);
    }
    return reader;
  };
  const replies: OneReply[] = [];
  const transfer: ArrayBuffer[] = [];
  const handle = (m: ScanMessage): void => {
    if (m.kind === 'ring-chunk') {
      const reader = readerOf(m.id, m.encoding);
      let at = m.start % ring.length;
      let left = m.length;
      while (left > 0) {
        const n = Math.min(left, ring.length - at);
        const view = ring.subarray(at, at + n);
        // the JSON scanner keeps nothing of what it is fed; the msgpack reader keeps its chunks: give it a copy
        reader.feed(m.encoding === 'json' ? view : view.slice());
        left -= n;
        at = (at + n) % ring.length;
      }
      // read: the event loop may write over these bytes from now on
      Atomics.store(read, 0, BigInt(m.start + m.length));
      return;
    }
    if (m.kind === 'response') {
      const info = parseCtxResponse(m.bytes, m.shape);
      const ringIds = toRing(info.workerPromptTokens);
      replies.push({
        kind: 'response',
        id: m.id,
        info: ringIds === null ? info : { ...info, workerPromptTokens: null },
        ringIds,
      });
      return;
    }
    if (m.kind === 'chunk') {
      readerOf(m.id, m.encoding).feed(m.bytes);
      return;
    }
    const reader = open.get(m.id);
    open.delete(m.id);
    const info = (reader ?? createCtxBodyReader(m.encoding, scratch)).finish(m.headers);
    const tokens = info?.promptTokens ?? null;
    // the decision digest's pass over the prompt, done here instead of on the relay's event loop; only a trajectory's
    // turns are compared by them, so an uncorrelated decision goes without
    const fingerprints =
      tokens !== null && info !== null && info.correlationId !== null ? promptFingerprints(tokens) : null;
    const ringIds = toRing(tokens);
    const sent = info !== null && ringIds !== null ? { ...info, promptTokens: null } : info;
    replies.push({ kind: 'request', id: m.id, info: sent, promptFingerprints: fingerprints, ringIds });
    if (fingerprints !== null) transfer.push(fingerprints.buffer as ArrayBuffer);
  };
  port.on('message', (m: ScanRequest) => {
    if (m.kind === 'batch') for (const item of m.items) handle(item);
    else handle(m);
    if (replies.length === 0) return;
    const reply: ScanReply = replies.length === 1 ? replies[0]! : { kind: 'batch', items: [...replies] };
    port.postMessage(reply, [...transfer]);
    replies.length = 0;
    transfer.length = 0;
  });
}
