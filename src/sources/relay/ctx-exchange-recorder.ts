// What the relay records of a CTX exchange, without its sockets: WorkerRelay forwards the bytes and tells the recorder
// what passed (request started, request body chunks, request ended, response chunks, response ended, finished); the
// recorder turns that into one decision and one outcome observation. The schedule property test
// (test/reliability/ctx-exchange-schedules.test.ts) drives it with interleaved exchanges, as relay-path-schedules does
// the event path.
//
// Decisions:
// - Decisions are recorded in the order the request bodies ended (each takes its DecisionGate slot then), each
//   before its outcome, with the in-flight counts taken when the request arrived.
// - The prompt is read as the body streams through, chunk by chunk (CtxScans, a worker thread in the relay); the
//   bounded copy (captureMaxBytes) is only for the rare body the scanner hands to the text path (several prompts),
//   for a scan that failed, and for a render.
// - A decision already taken (the request ended, or the exchange finished first) reads no more chunks.
// - A response keeps its head up to captureMaxBytes (a context-only answer carries the worker's prompt ids) and past
//   that only its tail (usage comes last), so concurrency cannot multiply a big copy.
// - A render (--tokenizer) is CPU the forwarding would share: it starts once the exchange's answer went out.
import { ctxBodyEncoding, MSGPACK_FLAG_HEADER, type CtxBodyEncoding } from '../../core/relay/ctx-body-encoding.js';
import { createCtxBodyReader } from '../../core/relay/ctx-body-reader.js';
import { CtxScanScratch } from '../../core/relay/ctx-request-scanner.js';
import {
  parseCtxRequest,
  unreadableCtxRequest,
  type CtxRequestInfo,
  type HeaderBag,
} from '../../core/relay/ctx-request.js';
import type { CtxResponseInfo, CtxResponseShape } from '../../core/relay/ctx-response.js';
import type { RequestUnreadableReason } from '../../core/relay/request-unreadable.js';
import type { Observation } from '../../core/observe/observation.js';
import type { Clock, Logger, ObservationSink } from '../ports.js';
import type { RenderPool } from '../tokenizer/render-pool.js';
import { BodyCapture } from './body-capture.js';
import type { CtxScan } from './ctx-scan-pool.js';
import type { DecisionGate } from './decision-gate.js';
import type { InflightTracker } from './inflight-tracker.js';
import { renderCheckOf, withRouterSideIds, type RenderResult, type RouterSideIds } from './router-side-ids.js';

const RESPONSE_TAIL_BYTES = 256 * 1024;

/** Where request bodies and responses are read (CtxScanPool: a worker thread, or inline). */
export interface CtxScans {
  open(encoding: CtxBodyEncoding): CtxScan;
  /** `bytes` is handed over and must not be reused */
  response(bytes: Uint8Array, shape: CtxResponseShape): Promise<CtxResponseInfo>;
}

export interface CtxRecorderDeps {
  /** server id of observations */
  readonly server: string;
  /** logs name this, e.g. relay:ctx0 */
  readonly source: string;
  /** decisions take their slot here; the relay's event observations pass through the same gate */
  readonly gate: DecisionGate;
  /** outcomes and render checks (after their decision, which the gate flushed) */
  readonly sink: ObservationSink;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly inflight: InflightTracker;
  readonly scans: CtxScans;
  readonly captureMaxBytes: number;
  readonly render?: RenderPool;
  readonly onUnreadable?: (server: string, reason: RequestUnreadableReason) => void;
  readonly onRender?: (server: string, result: RenderResult, reason: string | null) => void;
}

export class CtxExchangeRecorder {
  readonly #deps: CtxRecorderDeps;
  /** the last decision recorded or pending: decisions are recorded one after another, in the order bodies ended */
  #lastDecision: Promise<void> = Promise.resolve();
  #requestCounter = 0;
  #capturesTruncated = 0;
  readonly #unreadable = new Map<RequestUnreadableReason, number>();

  #scratch: CtxScanScratch | null = null;

  constructor(deps: CtxRecorderDeps) {
    this.#deps = deps;
  }

  /** the id kernel and scratch of bodies read here, not by a scan (made when first needed) */
  get scratch(): CtxScanScratch {
    return (this.#scratch ??= new CtxScanScratch());
  }

  /** request or response copies that hit their bound (prompt or usage not read) */
  get capturesTruncated(): number {
    return this.#capturesTruncated;
  }

  /** CTX requests whose prompt or ids could not be read, by reason (cumulative) */
  unreadableRequests(): ReadonlyMap<RequestUnreadableReason, number> {
    return this.#unreadable;
  }

  /** A CTX request arrived (its headers): counted in flight from now until finished. */
  start(headers: HeaderBag, ts: number): CtxExchange {
    const inflight = this.#deps.inflight.snapshot();
    this.#deps.inflight.inc(this.#deps.server);
    return new CtxExchange(
      this,
      this.#deps,
      headers,
      ts,
      inflight,
      `relay-${this.#deps.server}-${++this.#requestCounter}`,
    );
  }

  /** @internal the exchange's bookkeeping */
  countTruncated(): void {
    this.#capturesTruncated++;
  }

  /** @internal */
  countUnreadable(reason: RequestUnreadableReason): void {
    this.#unreadable.set(reason, (this.#unreadable.get(reason) ?? 0) + 1);
    this.#deps.onUnreadable?.(this.#deps.server, reason);
  }

  /** @internal queues one decision behind the previous ones; resolves once it was recorded (or given up) */
  chain(record: (previous: Promise<void>) => Promise<void>): Promise<void> {
    const decision = record(this.#lastDecision);
    this.#lastDecision = decision;
    return decision;
  }
}

/** One CTX request and its answer, as the relay saw them pass. Call in order: chunks, requestEnd, response*, finish. */
export class CtxExchange {
  readonly #recorder: CtxExchangeRecorder;
  readonly #deps: CtxRecorderDeps;
  readonly #headers: HeaderBag;
  readonly #ts: number;
  readonly #inflight: Record<string, number>;
  readonly #encoding: CtxBodyEncoding;
  /** the body's bounded copy, until the scan's answer shows it is not needed (null from then on) */
  #request: BodyCapture | null;
  readonly #scan: CtxScan;
  readonly #response: BodyCapture;
  #requestId: string;
  #decision: Promise<void> | undefined;
  #usage: Promise<CtxResponseInfo> | null = null;
  #routerIds: RouterSideIds | null = null;
  /** the scan's fingerprints of the prompt the decision carries (null: the state computes them) */
  #fingerprints: Uint32Array | null = null;
  #finished = false;
  #markForwarded: () => void = () => undefined;
  readonly #forwarded = new Promise<void>((resolve) => (this.#markForwarded = resolve));

  constructor(
    recorder: CtxExchangeRecorder,
    deps: CtxRecorderDeps,
    headers: HeaderBag,
    ts: number,
    inflight: Record<string, number>,
    requestId: string,
  ) {
    this.#recorder = recorder;
    this.#deps = deps;
    this.#headers = headers;
    this.#ts = ts;
    this.#inflight = inflight;
    this.#requestId = requestId;
    this.#encoding = ctxBodyEncoding(headers);
    this.#request = new BodyCapture(deps.captureMaxBytes, 0);
    this.#scan = deps.scans.open(this.#encoding);
    this.#response = new BodyCapture(deps.captureMaxBytes, RESPONSE_TAIL_BYTES);
  }

  /** the disaggregated request id once the decision read it, else the relay's own id */
  get requestId(): string {
    return this.#requestId;
  }

  /** A request body chunk that was forwarded (its bytes must not change until the next tick). */
  requestChunk(chunk: Buffer): void {
    if (this.#decision !== undefined) return; // a decision already taken reads no more
    const request = this.#request!; // kept until the decision, which reads no more chunks
    request.add(chunk);
    if (request.complete) this.#scan.feed(chunk);
  }

  /** The request body ended: the decision takes its place in the order now. */
  requestEnd(): void {
    void this.#decide();
  }

  /** A response body chunk handed to the client. */
  responseChunk(chunk: Buffer): void {
    this.#response.add(chunk);
  }

  /** The whole response was handed to the client; its usage is read from the kept copy. */
  responseEnd(headers: HeaderBag): void {
    if (this.#usage !== null) return;
    const ct = headers['content-type'];
    const sse = typeof ct === 'string' && ct.includes('text/event-stream');
    if (!this.#response.complete) this.#recorder.countTruncated();
    const msgpack = headers[MSGPACK_FLAG_HEADER] === '1';
    this.#usage = this.#deps.scans.response(this.#response.bytes(), {
      sse,
      complete: this.#response.complete,
      msgpack,
    });
  }

  /**
   * The exchange is over (answered, failed or cut off): no longer in flight. Records the decision (if the body never
   * ended, from what was read) and then the outcome. Once only.
   */
  async finish(ok: boolean, latencyMs: number): Promise<void> {
    if (this.#finished) return;
    this.#finished = true;
    this.#markForwarded();
    const { server, clock } = this.#deps;
    this.#deps.inflight.dec(server);
    await this.#decide();
    const usage = this.#usage === null ? null : await this.#usage;
    const check = ok
      ? renderCheckOf(
          { ts: clock(), requestId: this.#requestId, server },
          this.#routerIds,
          usage?.workerPromptTokens,
          this.#deps.render,
        )
      : null;
    if (check !== null) this.#deps.sink.apply(check);
    this.#deps.sink.apply({
      kind: 'outcome',
      ts: clock(),
      requestId: this.#requestId,
      server,
      ok,
      promptTokens: usage?.promptTokens ?? null,
      cachedTokens: usage?.cachedTokens ?? null,
      latencyMs,
      workerPromptTokens: usage?.workerPromptTokens ?? null,
    });
  }

  #decide(): Promise<void> {
    if (this.#decision !== undefined) return this.#decision;
    const info = this.#read();
    const slot = this.#deps.gate.slot();
    this.#decision = this.#recorder.chain((previous) =>
      previous
        .then(async () => slot(this.#record(await info)))
        .catch((err: unknown) =>
          this.#deps.logger.error(`${this.#deps.source}: recording a decision failed`, { error: String(err) }),
        )
        .finally(() => slot(null)),
    );
    return this.#decision;
  }

  async #read(): Promise<CtxRequestInfo> {
    const headers = this.#headers;
    const request = this.#request!;
    if (!request.complete) {
      this.#recorder.countTruncated();
      this.#scan.drop();
      this.#request = null;
      return unreadableCtxRequest('too_large', headers);
    }
    const scanned = await this.#scan.finish(headers).catch(() => undefined);
    let read: CtxRequestInfo;
    if (scanned !== null && scanned !== undefined) {
      read = scanned.info;
      this.#fingerprints = scanned.promptFingerprints;
    }
    // the JSON text path (several prompts, strings), or a scan that failed: read the capture here
    else if (this.#encoding === 'json') read = parseCtxRequest(request.text(), headers);
    else {
      const inline = createCtxBodyReader(this.#encoding, this.#recorder.scratch);
      inline.feed(request.bytes());
      read = inline.finish(headers) ?? unreadableCtxRequest('malformed', headers);
    }
    const { server, onRender, render } = this.#deps;
    // the copy is only needed for a render: let its chunks go now, not when the exchange ends — a request's socket
    // buffers that outlive a few scavenges are promoted, and only the old generation's collections free them
    const rendering = render !== undefined && read.promptTokens === null;
    this.#request = rendering ? request : null;
    // the decision's slot in the gate keeps the order while a render waits for the answer to go out
    if (rendering) await this.#forwarded;
    const withIds = await withRouterSideIds(
      read,
      render,
      () => request.bytes(),
      this.#encoding,
      (result, reason) => onRender?.(server, result, reason),
    );
    this.#request = null;
    this.#routerIds = withIds.routerIds;
    return withIds.info;
  }

  #record(info: CtxRequestInfo): Observation {
    if (info.disaggRequestId !== null) this.#requestId = info.disaggRequestId;
    if (info.unreadable !== null) this.#recorder.countUnreadable(info.unreadable);
    return {
      kind: 'decision',
      ts: this.#ts,
      requestId: this.#requestId,
      correlationId: info.correlationId,
      server: this.#deps.server,
      promptTokens: info.promptTokens,
      promptTokenCount: info.promptTokens?.length ?? null,
      // the fingerprints of the scanned ids (a render's ids are not the scan's)
      ...(this.#fingerprints !== null && this.#routerIds?.from === 'request'
        ? { promptFingerprints: this.#fingerprints }
        : {}),
      ...(this.#routerIds?.from === 'tokenizer' ? { promptTokensFrom: 'tokenizer' as const } : {}),
      inflight: this.#inflight,
      promptForm: info.promptForm,
      unreadable: info.unreadable,
    };
  }
}
