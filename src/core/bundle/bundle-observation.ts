// The observation of one bundle line: one entry per kind, most of them a table of field readers (bundle-schema.ts)
// checked against the kind's type, a problem thrown as DecodeError with its path (decodeBundleRecord turns it into
// the line's issue). Decision and outcome keys come back through KeyHistory. A new kind is one entry in DECODERS.
import type { StoredEventCheck } from '../state/hash-verifier.js';
import { PROMPT_FORMS, REQUEST_UNREADABLE_REASONS } from '../relay/request-unreadable.js';
import {
  ROUTER_EVENT_READS,
  STREAM_SEQUENCE_CHANGES,
  type DecisionObservation,
  type ObservationKind,
  type OutcomeObservation,
  type PollFailureObservation,
  type RenderCheckObservation,
  type RouterConfigObservation,
  type RouterPollObservation,
  type RouterScoreObservation,
  type RouterServerFactObservation,
  type RouterStateObservation,
  type ServerInfoObservation,
  type SidecarLoadObservation,
  type SourceHealthObservation,
  type StreamSequenceObservation,
  type WorkerEventsObservation,
} from '../observe/observation.js';
import { RENDER_DRIFT_CAUSES, type RenderDiff } from '../render/compare-renders.js';
import { VLLM_HASH_ALGOS } from '../hashing/vllm-block-hash.js';
import { STREAM_ENGINES, type StreamOrigin } from '../stream/stream-engine.js';
import type { KvEvent } from '../wire/kv-event.js';
import { decodeCheck, decodeEvent } from './bundle-events.js';
import {
  DecodeError,
  algoOrNull,
  arr,
  asObject,
  boolOrNull,
  ids,
  num,
  numOrNull,
  profileOrNull,
  str,
  strOrNull,
  tokens,
  type JsonObject,
} from './bundle-fields.js';
import { decodeKeys, type KeyHistory } from './bundle-keys.js';
import {
  NOT_RECORDED,
  READ_APART,
  arrayOf,
  enumOf,
  lineReader,
  nullable,
  objectOf,
  oneOf,
  optional,
  orElse,
  type Reader,
} from './bundle-schema.js';
import type { BundleRecord } from './bundle-codec.js';
import { decodeSidecarStats } from './bundle-sidecar-stats.js';

/** one kind's line (its `kind` and `ts` already read) */
type KindDecoder = (o: JsonObject, ts: number, history: KeyHistory) => BundleRecord;

/** a kind without a digest: the table is the whole line */
function plain<O extends BundleRecord['observation']>(read: (o: JsonObject, ts: number) => O): KindDecoder {
  return (o, ts) => ({ observation: read(o, ts), digest: null });
}

const streamOrigin = objectOf<StreamOrigin>({
  engine: enumOf(STREAM_ENGINES, (e) => `unknown stream engine ${e}`),
  hashes: enumOf(['native', 'rekeyed'] as const, (h) => `unknown stream hashes ${h}`),
  vllmHashing: optional(
    objectOf<NonNullable<StreamOrigin['vllmHashing']>>({
      algo: nullable(enumOf(VLLM_HASH_ALGOS, (a) => `unknown vLLM hash algorithm ${a}`)),
      seedKnown: orElse(boolOrNull, false),
    }),
    'nullish',
  ),
});

const workerEventsLine = lineReader<WorkerEventsObservation>('worker-events', {
  server: str,
  firstSeq: num,
  events: READ_APART,
  stream: optional(streamOrigin, 'nullish'),
  engineChecks: NOT_RECORDED,
});

/** the events are read beside the table: their stored blocks' token counts check the digest's hashes */
function decodeWorkerEvents(o: JsonObject, ts: number): BundleRecord {
  const raw = arr(o.events, '$.events');
  const events: KvEvent[] = [];
  const tokenCounts: (number[] | null)[] = [];
  for (let i = 0; i < raw.length; i++) {
    const decoded = decodeEvent(raw[i]!, `$.events[${i}]`);
    events.push(decoded.event);
    tokenCounts.push(decoded.tokenCounts);
  }
  const observation = workerEventsLine(o, ts, { events });
  if (o.digest === undefined || o.digest === null) return { observation, digest: null };
  const stored = arr(asObject(o.digest, '$.digest').stored, '$.digest.stored');
  if (stored.length !== events.length) throw new DecodeError('$.digest.stored', 'must have one entry per event');
  const checks: (StoredEventCheck | null)[] = [];
  for (let i = 0; i < stored.length; i++) {
    const c = stored[i];
    checks.push(c === null || c === undefined ? null : decodeCheck(c, tokenCounts[i]!, `$.digest.stored[${i}]`));
  }
  return { observation, digest: { kind: 'worker-events', digest: { stored: checks } } };
}

const inflightCounts: Reader<Readonly<Record<string, number>>> = (value, path) =>
  Object.fromEntries(Object.entries(asObject(value, path)).map(([k, v]) => [k, num(v, `${path}.${k}`)]));

// in the order the encoder writes them (a decoded line re-encodes to the same JSON)
const decisionLine = lineReader<DecisionObservation>('decision', {
  requestId: str,
  correlationId: strOrNull,
  server: str,
  promptTokens: nullable(tokens),
  promptTokenCount: numOrNull,
  inflight: nullable(inflightCounts),
  // optional fields appear only when the line has them (a bundle round-trips to the same observation)
  promptBlocks: optional(numOrNull),
  promptForm: optional(oneOf(PROMPT_FORMS)),
  promptTokensFrom: optional(orElse(oneOf(['request', 'tokenizer'] as const), 'request')),
  unreadable: optional(oneOf(REQUEST_UNREADABLE_REASONS)),
  promptFingerprints: NOT_RECORDED,
});

function decodeDecision(o: JsonObject, ts: number, history: KeyHistory): BundleRecord {
  const observation = decisionLine(o, ts);
  if (o.digest === undefined || o.digest === null) return { observation, digest: null };
  const keys = asObject(o.digest, '$.digest').keys;
  return {
    observation,
    digest: { kind: 'decision', keys: decodeKeys(keys, observation.correlationId, history, '$.digest.keys') },
  };
}

const outcomeLine = lineReader<OutcomeObservation>('outcome', {
  requestId: str,
  server: str,
  ok: orElse(boolOrNull, false),
  promptTokens: numOrNull,
  cachedTokens: numOrNull,
  latencyMs: numOrNull,
  promptBlocks: optional(numOrNull),
  cachedBlocks: optional(numOrNull),
  workerPromptTokens: optional(tokens, 'nullish'),
});

function decodeOutcome(o: JsonObject, ts: number, history: KeyHistory): BundleRecord {
  const observation = outcomeLine(o, ts);
  if (o.digest === undefined || o.digest === null) return { observation, digest: null };
  const keys = asObject(o.digest, '$.digest').keys;
  return { observation, digest: { kind: 'outcome', keys: decodeKeys(keys, null, history, '$.digest.keys') } };
}

type Fact<F extends RouterServerFactObservation['fact']> = Extract<RouterServerFactObservation, { fact: F }>;
type FactLine<F extends RouterServerFactObservation['fact']> = (
  o: JsonObject,
  ts: number,
  apart: { fact: F },
) => Fact<F>;
const FACT_LINES: { readonly [F in RouterServerFactObservation['fact']]: FactLine<F> } = {
  'polling-skipped': lineReader<Fact<'polling-skipped'>>('router-server-fact', {
    server: str,
    fact: READ_APART,
    routerTokensPerBlock: num,
    workerTokensPerBlock: num,
    divisible: orElse(boolOrNull, true),
  }),
  'event-match': lineReader<Fact<'event-match'>>('router-server-fact', {
    server: str,
    fact: READ_APART,
    totalMatch: num,
    eventMatch: num,
    eventBlocks: num,
    totalBlocks: num,
  }),
};

function decodeRouterServerFact(o: JsonObject, ts: number): BundleRecord {
  const fact = str(o.fact, '$.fact');
  if (!Object.hasOwn(FACT_LINES, fact)) throw new DecodeError('$.fact', `unknown router-server-fact ${fact}`);
  const known = fact as RouterServerFactObservation['fact'];
  return { observation: (FACT_LINES[known] as FactLine<typeof known>)(o, ts, { fact: known }), digest: null };
}

const renderDiff = objectOf<RenderDiff>({
  position: num,
  routerLength: num,
  workerLength: num,
  commonSuffix: num,
  routerSpan: num,
  workerSpan: num,
  windowFrom: num,
  routerWindow: ids,
  workerWindow: ids,
  cause: enumOf(RENDER_DRIFT_CAUSES, (c) => `unknown cause ${c}`),
  side: nullable(enumOf(['router', 'worker'] as const, (s) => `expected router, worker or null, got ${s}`)),
});

/** Every kind's decoder; a kind a line names that is not here is the line's issue. */
const DECODERS: { readonly [K in ObservationKind]: KindDecoder } = {
  'worker-events': decodeWorkerEvents,
  decision: decodeDecision,
  outcome: decodeOutcome,
  'router-server-fact': decodeRouterServerFact,
  'stream-sequence': plain(
    lineReader<StreamSequenceObservation>('stream-sequence', {
      server: str,
      rank: num,
      change: enumOf(STREAM_SEQUENCE_CHANGES, (c) => `unknown stream change ${c}`),
      lost: num,
      filled: num,
      subscriberBehindMs: optional(num),
    }),
  ),
  'router-poll': plain(
    lineReader<RouterPollObservation>('router-poll', {
      server: str,
      consumer: str,
      fromSeq: num,
      toSeq: num,
      dropped: num,
    }),
  ),
  'server-info': plain(
    lineReader<ServerInfoObservation>('server-info', {
      server: str,
      hashAlgo: algoOrNull,
      tokensPerBlock: numOrNull,
      kvCapacityBlocks: optional(num, 'nullish'),
    }),
  ),
  'router-config': plain(
    lineReader<RouterConfigObservation>('router-config', {
      source: enumOf(
        ['debug-endpoint', 'orchestrator-log', 'config', 'simulator'] as const,
        (s) => `unknown router-config source ${s}`,
      ),
      routerType: strOrNull,
      tokensPerBlock: numOrNull,
      tokensPerBlockAdopted: optional(orElse(boolOrNull, false)),
      maxBatchSize: numOrNull,
      backfillBlockHashesOnFinish: boolOrNull,
      servers: nullable(arrayOf(str)),
      profile: optional(profileOrNull),
      trackRoutedBlocks: optional(boolOrNull),
      loadWeight: optional(numOrNull),
      loadCap: optional(numOrNull),
      readsEvents: optional(oneOf(ROUTER_EVENT_READS)),
    }),
  ),
  'router-state': plain(
    lineReader<RouterStateObservation>('router-state', {
      server: str,
      activeRequests: numOrNull,
      hashAlgo: algoOrNull,
      blockTableSize: numOrNull,
      polls: numOrNull,
      pollFailures: numOrNull,
    }),
  ),
  'router-score': plain(
    lineReader<RouterScoreObservation>('router-score', {
      seq: num,
      requestId: str,
      correlationId: strOrNull,
      chosen: str,
      candidates: arrayOf(
        objectOf<RouterScoreObservation['candidates'][number]>({
          server: str,
          matchedTokens: num,
          activeRequests: num,
          score: num,
        }),
      ),
    }),
  ),
  'poll-failure': plain(lineReader<PollFailureObservation>('poll-failure', { server: str, message: str })),
  'render-check': plain(
    lineReader<RenderCheckObservation>('render-check', {
      requestId: str,
      server: str,
      routerIds: enumOf(['tokenizer', 'request'] as const, (r) => `expected tokenizer or request, got ${r}`),
      promptTokens: num,
      diff: nullable(renderDiff),
    }),
  ),
  'sidecar-stats': plain(decodeSidecarStats),
  'sidecar-load': plain(
    lineReader<SidecarLoadObservation>('sidecar-load', { intervalMs: num, eventLoopDelayMs: num, utilization: num }),
  ),
  'source-health': plain(
    lineReader<SourceHealthObservation>('source-health', {
      source: str,
      up: orElse(boolOrNull, false),
      error: strOrNull,
    }),
  ),
};

export function decodeObservation(o: JsonObject, history: KeyHistory): BundleRecord {
  const kind = str(o.kind, '$.kind');
  const ts = num(o.ts, '$.ts');
  if (!Object.hasOwn(DECODERS, kind)) throw new DecodeError('$.kind', `unknown observation kind ${kind}`);
  return DECODERS[kind as ObservationKind](o, ts, history);
}
