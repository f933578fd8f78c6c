// Property test of the relay's CTX exchange recorder (src/sources/relay/ctx-exchange-recorder.ts, what WorkerRelay
// records of completion requests behind its sockets), as relay-path-schedules.test.ts is of its event path: 1 000
// generated schedules per CI run of several exchanges interleaved chunk by chunk — request bodies split anywhere,
// bodies over the capture bound, text and malformed prompts, clients gone before their body ended, upstream failures
// and 5xx, SSE and JSON answers — with scans that answer late or fail (the scan thread died), and event
// observations passing the same gate meanwhile. After each schedule:
// - each exchange gave exactly one decision and one outcome, its decision first, both under one request id;
// - decisions and event observations reached the sink in the order their decision points (body ended, or exchange
//   finished first) and the events happened, whatever order the scans answered in;
// - a decision's in-flight count is the number of exchanges started and not finished when it arrived;
// - a whole body within the bound gives its exact ids and request id; a larger one is 'too_large'; a partial one is
//   unreadable; an answered exchange's outcome has its usage, a failed one none;
// - the truncation and unreadable counters match the decisions, and nothing stays in flight.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CtxBodyEncoding } from '../../src/core/relay/ctx-body-encoding.js';
import { createCtxBodyReader } from '../../src/core/relay/ctx-body-reader.js';
import { CtxScanScratch } from '../../src/core/relay/ctx-request-scanner.js';
import { parseCtxResponse, type CtxResponseInfo, type CtxResponseShape } from '../../src/core/relay/ctx-response.js';
import type { Observation } from '../../src/core/observe/observation.js';
import { silentLogger } from '../../src/sources/ports.js';
import { CtxExchangeRecorder, type CtxExchange, type CtxScans } from '../../src/sources/relay/ctx-exchange-recorder.js';
import type { CtxScan } from '../../src/sources/relay/ctx-scan-pool.js';
import { promptFingerprints } from '../../src/core/state/incremental-keys.js';
import { DecisionGate } from '../../src/sources/relay/decision-gate.js';
import { InflightTracker } from '../../src/sources/relay/inflight-tracker.js';
import { RecordingSink } from '../helpers/recording-sink.js';

/** lets every pending promise callback and setImmediate run */
const settle = (): Promise<void> => new Promise((r) => setImmediate(r));
const settleTimes = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await settle();
};

type PromptKind = 'ids' | 'text' | 'malformed';
/** failed-midbody: the upstream failed while the body still streamed in (the rest arrives after the exchange finished) */
type Ending = 'answered-sse' | 'answered-json' | 'http-500' | 'upstream-failed' | 'client-gone' | 'failed-midbody';

interface ExchangePlan {
  readonly prompt: PromptKind;
  readonly ids: readonly number[];
  /** where the body is cut into chunks (fractions of its length) */
  readonly cuts: readonly number[];
  readonly ending: Ending;
  /** client-gone, failed-midbody: how many of the body's chunks were forwarded before the exchange ended */
  readonly goneAfter: number;
  readonly responseCuts: readonly number[];
  readonly usage: { readonly prompt: number; readonly cached: number };
  /** scan answers after this many event-loop turns; -1: the scan fails (a scan thread that died) */
  readonly scanDelay: number;
}

const planArb: fc.Arbitrary<ExchangePlan> = fc.record({
  prompt: fc.constantFrom<PromptKind>('ids', 'ids', 'ids', 'text', 'malformed'),
  ids: fc.array(fc.integer({ min: 0, max: 0xffff_ffff }), { minLength: 1, maxLength: 120 }),
  cuts: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }),
  ending: fc.constantFrom<Ending>(
    'answered-sse',
    'answered-sse',
    'answered-json',
    'http-500',
    'upstream-failed',
    'client-gone',
    'failed-midbody',
  ),
  goneAfter: fc.nat({ max: 6 }),
  responseCuts: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 4 }),
  usage: fc.record({ prompt: fc.nat({ max: 100_000 }), cached: fc.nat({ max: 100_000 }) }),
  scanDelay: fc.integer({ min: -1, max: 3 }),
});

function cutInto(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => Math.floor(c * bytes.length)))]
    .filter((c) => c > 0 && c < bytes.length)
    .sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const c of [...at, bytes.length]) {
    out.push(bytes.subarray(from, c));
    from = c;
  }
  return out;
}

function requestBody(plan: ExchangePlan, disaggId: number): Buffer {
  const params = `"disaggregated_params":{"request_type":"context_only","disagg_request_id":${disaggId}}`;
  if (plan.prompt === 'malformed') return Buffer.from(`{"model":"m","prompt":[1,2,{"x":`);
  const prompt = plan.prompt === 'ids' ? `[${plan.ids.join(',')}]` : JSON.stringify(`hello ${plan.ids[0]}`);
  return Buffer.from(`{"model":"m","prompt":${prompt},"max_tokens":1,${params}}`);
}

function responseOf(plan: ExchangePlan): { headers: Record<string, string>; body: Buffer } | null {
  const usage = `"usage":{"prompt_tokens":${plan.usage.prompt},"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":${plan.usage.cached}}}`;
  switch (plan.ending) {
    case 'answered-sse':
      return {
        headers: { 'content-type': 'text/event-stream' },
        body: Buffer.from(
          `data: {"choices":[{"index":0,"text":"a"}]}\n\ndata: {"choices":[],${usage}}\n\ndata: [DONE]\n\n`,
        ),
      };
    case 'answered-json':
      return {
        headers: { 'content-type': 'application/json' },
        body: Buffer.from(`{"id":"c","choices":[{"index":0,"text":"a"}],${usage}}`),
      };
    case 'http-500':
      return { headers: { 'content-type': 'application/json' }, body: Buffer.from('{"error":{"message":"boom"}}') };
    case 'upstream-failed':
    case 'client-gone':
    case 'failed-midbody':
      return null;
  }
}

/** The real body reader, answering after a scripted number of turns, or failing. */
class ScriptedScans implements CtxScans {
  readonly delays: number[] = [];
  readonly #scratch = new CtxScanScratch();

  open(encoding: CtxBodyEncoding): CtxScan {
    const reader = createCtxBodyReader(encoding, this.#scratch);
    const delay = this.delays.shift() ?? 0;
    return {
      feed: (chunk) => reader.feed(Uint8Array.from(chunk)),
      finish: async (headers) => {
        if (delay < 0) {
          await settle();
          throw new Error('scan thread stopped');
        }
        await settleTimes(delay);
        const info = reader.finish(headers);
        // as the scan thread does: the prompt's fingerprints ride with its ids
        const tokens = info?.promptTokens ?? null;
        return info === null ? null : { info, promptFingerprints: tokens === null ? null : promptFingerprints(tokens) };
      },
      drop: () => undefined,
    };
  }

  async response(bytes: Uint8Array, shape: CtxResponseShape): Promise<CtxResponseInfo> {
    await settle();
    return parseCtxResponse(bytes, shape);
  }
}

type Mark = { readonly kind: 'decision'; readonly exchange: number } | { readonly kind: 'event'; readonly tag: number };

export const CTX_EXCHANGE_SCHEDULES = Number(process.env.KVS_CTX_EXCHANGE_SCHEDULES ?? 1_000);

describe(`CTX exchange recorder under generated schedules (${CTX_EXCHANGE_SCHEDULES} per run)`, () => {
  it('one decision then one outcome per exchange, in decision-point order with the events, exact reads, exact counters', async () => {
    const seen = { tooLarge: 0, partial: 0, failedScans: 0, reordered: 0, fingerprinted: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.array(planArb, { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 80 }),
        fc.integer({ min: 80, max: 1_400 }),
        async (plans, picks, captureMaxBytes) => {
          let now = 1_000;
          const clock = (): number => now;
          const sink = new RecordingSink();
          const gate = new DecisionGate(sink);
          const inflight = new InflightTracker();
          inflight.register('ctx0');
          const scans = new ScriptedScans();
          scans.delays.push(...plans.map((p) => p.scanDelay));
          const recorder = new CtxExchangeRecorder({
            server: 'ctx0',
            source: 'relay:ctx0',
            gate,
            sink,
            clock,
            logger: silentLogger,
            inflight,
            scans,
            captureMaxBytes,
          });

          const bodies = plans.map((p, i) => requestBody(p, 7_000 + i));
          const chunks = bodies.map((b, i) => cutInto(b, plans[i]!.cuts));
          const responses = plans.map(responseOf);
          /** each exchange's actions, in the order HTTP would produce them */
          const actions: ('start' | 'chunk' | 'end' | 'rchunk' | 'rend' | 'finish')[][] = plans.map((p, i) => {
            const n = chunks[i]!.length;
            const before = Math.min(p.goneAfter, n);
            if (p.ending === 'client-gone') return ['start', ...Array<'chunk'>(before).fill('chunk'), 'finish'];
            if (p.ending === 'failed-midbody')
              return [
                'start',
                ...Array<'chunk'>(before).fill('chunk'),
                'finish',
                ...Array<'chunk'>(n - before).fill('chunk'),
                'end',
              ];
            const r = responses[i] ?? null;
            const rchunks = r === null ? 0 : cutInto(r.body, p.responseCuts).length;
            return [
              'start',
              ...Array<'chunk'>(n).fill('chunk'),
              'end',
              ...Array<'rchunk'>(rchunks).fill('rchunk'),
              ...(r !== null ? ['rend' as const] : []),
              'finish',
            ];
          });
          const exchanges: (CtxExchange | undefined)[] = plans.map(() => undefined);
          const fed = plans.map(() => 0);
          /** chunks handed over before the exchange's decision point */
          const fedBeforeDecision = plans.map(() => 0);
          const rfed = plans.map(() => 0);
          const finished: Promise<void>[] = [];
          const marks: Mark[] = [];
          const decided = plans.map(() => false);
          /** per exchange: exchanges in flight when it started (itself excluded) */
          const inflightAtStart: number[] = plans.map(() => -1);
          let inFlight = 0;
          let eventTag = 0;
          let scanOrderBroken = false;

          const advance = (i: number): void => {
            const action = actions[i]!.shift()!;
            const plan = plans[i]!;
            now += 1;
            switch (action) {
              case 'start':
                inflightAtStart[i] = inFlight;
                inFlight++;
                exchanges[i] = recorder.start(
                  { 'content-type': 'application/json', 'x-correlation-id': `traj-${i}` },
                  now,
                );
                return;
              case 'chunk':
                exchanges[i]!.requestChunk(chunks[i]![fed[i]!++]!);
                return;
              case 'end':
                if (!decided[i]) {
                  marks.push({ kind: 'decision', exchange: i });
                  fedBeforeDecision[i] = fed[i]!;
                }
                decided[i] = true;
                exchanges[i]!.requestEnd();
                return;
              case 'rchunk':
                exchanges[i]!.responseChunk(cutInto(responses[i]!.body, plan.responseCuts)[rfed[i]!++]!);
                return;
              case 'rend':
                exchanges[i]!.responseEnd(responses[i]!.headers);
                return;
              case 'finish': {
                if (!decided[i]) {
                  marks.push({ kind: 'decision', exchange: i });
                  fedBeforeDecision[i] = fed[i]!;
                }
                decided[i] = true;
                inFlight--;
                const ok = plan.ending === 'answered-sse' || plan.ending === 'answered-json';
                finished.push(exchanges[i]!.finish(ok, 5));
                return;
              }
            }
          };

          for (const pick of picks) {
            const live = actions.map((a, i) => (a.length > 0 ? i : -1)).filter((i) => i >= 0);
            if (live.length === 0) break;
            const choice = pick % (live.length + 2);
            if (choice < live.length) advance(live[choice]!);
            else if (choice === live.length) {
              // an event observation (a drain or a delivery) passing the same gate
              const tag = ++eventTag;
              marks.push({ kind: 'event', tag });
              gate.apply({
                kind: 'router-poll',
                ts: now,
                server: 'ctx0',
                consumer: 'r',
                fromSeq: tag,
                toSeq: tag,
                dropped: 0,
              });
            } else await settle();
          }
          for (;;) {
            const next = actions.findIndex((a) => a.length > 0);
            if (next === -1) break;
            advance(next);
          }
          await Promise.all(finished);
          await settleTimes(3);

          // the sink's decisions and events, in order, are the schedule's decision points and events
          const byTag = (o: Observation): Mark | null => {
            if (o.kind === 'router-poll') return { kind: 'event', tag: o.fromSeq };
            if (o.kind === 'decision')
              return { kind: 'decision', exchange: Number(o.correlationId?.slice('traj-'.length)) };
            return null;
          };
          expect(sink.observations.map(byTag).filter((m) => m !== null)).toEqual(marks);

          const decisions = sink.of('decision');
          const outcomes = sink.of('outcome');
          expect(decisions).toHaveLength(plans.length);
          expect(outcomes).toHaveLength(plans.length);
          let truncated = 0;
          const unreadable = new Map<string, number>();
          plans.forEach((plan, i) => {
            const ex = exchanges[i]!;
            const decision = decisions.find((d) => d.correlationId === `traj-${i}`)!;
            const outcome = outcomes.find((o) => o.requestId === ex.requestId)!;
            expect(decision.requestId).toBe(ex.requestId);
            expect(outcome).toBeDefined();
            expect(sink.observations.indexOf(decision)).toBeLessThan(sink.observations.indexOf(outcome));
            expect(decision.inflight).toEqual({ ctx0: inflightAtStart[i] });
            expect(decision.ts).toBeLessThan(outcome.ts);

            const whole = fedBeforeDecision[i] === chunks[i]!.length;
            const fedBytes = chunks[i]!.slice(0, fedBeforeDecision[i]).reduce((n, c) => n + c.length, 0);
            const response = responses[i] ?? null;
            if (response !== null && response.body.length > captureMaxBytes) truncated++; // only its tail was kept
            if (fedBytes > captureMaxBytes) {
              truncated++;
              seen.tooLarge++;
              expect(decision.unreadable).toBe('too_large');
            } else if (!whole) {
              seen.partial++;
              expect(decision.unreadable).not.toBeNull();
              expect(decision.promptTokens).toBeNull();
            } else if (plan.prompt === 'malformed') {
              expect(decision.unreadable).toBe('malformed');
            } else {
              expect(decision.unreadable).toBeNull();
              expect(ex.requestId).toBe(String(7_000 + i));
              if (plan.prompt === 'ids') {
                expect(Array.from(decision.promptTokens ?? [])).toEqual(plan.ids);
                // the scan's fingerprints of those ids reach the state with the decision (a failed scan's fallback
                // read leaves them to the state)
                if (decision.promptFingerprints !== undefined) {
                  expect(decision.promptFingerprints).toEqual(promptFingerprints(Uint32Array.from(plan.ids)));
                  seen.fingerprinted++;
                }
              } else expect(decision.promptForm).toBe('text');
            }
            const reason = decision.unreadable;
            if (reason !== null && reason !== undefined) unreadable.set(reason, (unreadable.get(reason) ?? 0) + 1);
            if (plan.scanDelay < 0) seen.failedScans++;

            const answered = plan.ending === 'answered-sse' || plan.ending === 'answered-json';
            expect(outcome.ok).toBe(answered);
            expect(outcome.promptTokens).toBe(answered ? plan.usage.prompt : null);
            expect(outcome.cachedTokens).toBe(answered ? plan.usage.cached : null);
          });
          // decisions whose scans answered out of order still came out in decision-point order (checked above)
          const delays = marks
            .filter((m): m is Extract<Mark, { kind: 'decision' }> => m.kind === 'decision')
            .map((m) => plans[m.exchange]!.scanDelay);
          for (let k = 1; k < delays.length; k++) if (delays[k]! < delays[k - 1]!) scanOrderBroken = true;
          if (scanOrderBroken) seen.reordered++;
          expect(recorder.capturesTruncated).toBe(truncated);
          expect(Object.fromEntries(recorder.unreadableRequests())).toEqual(Object.fromEntries(unreadable));
          expect(inflight.get('ctx0')).toBe(0);
          expect(gate.held).toBe(0);
        },
      ),
      { numRuns: CTX_EXCHANGE_SCHEDULES },
    );
    // the generator reaches every fault it claims to test
    if (CTX_EXCHANGE_SCHEDULES >= 200) {
      expect(seen.tooLarge).toBeGreaterThan(0);
      expect(seen.partial).toBeGreaterThan(0);
      expect(seen.failedScans).toBeGreaterThan(0);
      expect(seen.reordered).toBeGreaterThan(0);
      expect(seen.fingerprinted).toBeGreaterThan(0);
    }
  });
});
