// The observation of one bundle line, field by field: every value checked, a problem thrown as DecodeError with its
// path (decodeBundleRecord turns it into the line's issue). Decision and outcome keys come back through KeyHistory.
import type { StoredEventCheck } from '../state/hash-verifier.js';
import { PROMPT_FORMS, REQUEST_UNREADABLE_REASONS } from '../relay/request-unreadable.js';
import {
  ROUTER_EVENT_READS,
  STREAM_SEQUENCE_CHANGES,
  type Observation,
  type RenderCheckObservation,
  type StreamSequenceChange,
} from '../observe/observation.js';
import { RENDER_DRIFT_CAUSES, type RenderDiff, type RenderDriftCause } from '../render/compare-renders.js';
import { isVllmHashAlgo } from '../hashing/vllm-block-hash.js';
import { isStreamEngine, type StreamOrigin } from '../stream/stream-engine.js';
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
  oneOfOrNull,
  profileOrNull,
  str,
  strOrNull,
  tokens,
  type Json,
  type JsonObject,
} from './bundle-fields.js';
import { decodeKeys, type KeyHistory } from './bundle-keys.js';
import type { BundleRecord } from './bundle-codec.js';
import { decodeSidecarStats } from './bundle-sidecar-stats.js';

const isStreamSequenceChange = (v: string): v is StreamSequenceChange =>
  (STREAM_SEQUENCE_CHANGES as readonly string[]).includes(v);

function decodeRenderCheck(o: JsonObject, ts: number): RenderCheckObservation {
  const routerIds = str(o.routerIds, '$.routerIds');
  if (routerIds !== 'tokenizer' && routerIds !== 'request')
    throw new DecodeError('$.routerIds', `expected tokenizer or request, got ${routerIds}`);
  let diff: RenderDiff | null = null;
  if (o.diff !== null && o.diff !== undefined) {
    const d = asObject(o.diff, '$.diff');
    const cause = str(d.cause, '$.diff.cause');
    if (!(RENDER_DRIFT_CAUSES as readonly string[]).includes(cause))
      throw new DecodeError('$.diff.cause', `unknown cause ${cause}`);
    const side = strOrNull(d.side, '$.diff.side');
    if (side !== null && side !== 'router' && side !== 'worker')
      throw new DecodeError('$.diff.side', `expected router, worker or null, got ${side}`);
    diff = {
      position: num(d.position, '$.diff.position'),
      routerLength: num(d.routerLength, '$.diff.routerLength'),
      workerLength: num(d.workerLength, '$.diff.workerLength'),
      commonSuffix: num(d.commonSuffix, '$.diff.commonSuffix'),
      routerSpan: num(d.routerSpan, '$.diff.routerSpan'),
      workerSpan: num(d.workerSpan, '$.diff.workerSpan'),
      windowFrom: num(d.windowFrom, '$.diff.windowFrom'),
      routerWindow: ids(d.routerWindow, '$.diff.routerWindow'),
      workerWindow: ids(d.workerWindow, '$.diff.workerWindow'),
      cause: cause as RenderDriftCause,
      side,
    };
  }
  return {
    kind: 'render-check',
    ts,
    requestId: str(o.requestId, '$.requestId'),
    server: str(o.server, '$.server'),
    routerIds,
    promptTokens: num(o.promptTokens, '$.promptTokens'),
    diff,
  };
}

function decodeStreamOrigin(value: Json | undefined): StreamOrigin | null {
  if (value === undefined || value === null) return null;
  const o = asObject(value, '$.stream');
  const engine = str(o.engine, '$.stream.engine');
  const hashes = str(o.hashes, '$.stream.hashes');
  if (!isStreamEngine(engine)) throw new DecodeError('$.stream.engine', `unknown stream engine ${engine}`);
  if (hashes !== 'native' && hashes !== 'rekeyed')
    throw new DecodeError('$.stream.hashes', `unknown stream hashes ${hashes}`);
  if (o.vllmHashing === undefined || o.vllmHashing === null) return { engine, hashes };
  const h = asObject(o.vllmHashing, '$.stream.vllmHashing');
  const algo = strOrNull(h.algo, '$.stream.vllmHashing.algo');
  if (algo !== null && !isVllmHashAlgo(algo))
    throw new DecodeError('$.stream.vllmHashing.algo', `unknown vLLM hash algorithm ${algo}`);
  const seedKnown = boolOrNull(h.seedKnown, '$.stream.vllmHashing.seedKnown');
  return { engine, hashes, vllmHashing: { algo, seedKnown: seedKnown ?? false } };
}

export function decodeObservation(o: JsonObject, history: KeyHistory): BundleRecord {
  const kind = str(o.kind, '$.kind');
  const ts = num(o.ts, '$.ts');
  switch (kind) {
    case 'worker-events': {
      const raw = arr(o.events, '$.events');
      const events: KvEvent[] = [];
      const tokenCounts: (number[] | null)[] = [];
      for (let i = 0; i < raw.length; i++) {
        const decoded = decodeEvent(raw[i]!, `$.events[${i}]`);
        events.push(decoded.event);
        tokenCounts.push(decoded.tokenCounts);
      }
      const stream = decodeStreamOrigin(o.stream);
      const observation: Observation = {
        kind,
        ts,
        server: str(o.server, '$.server'),
        firstSeq: num(o.firstSeq, '$.firstSeq'),
        events,
        ...(stream !== null ? { stream } : {}),
      };
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
    case 'decision': {
      const correlationId = strOrNull(o.correlationId, '$.correlationId');
      const inflight =
        o.inflight === null || o.inflight === undefined
          ? null
          : Object.fromEntries(
              Object.entries(asObject(o.inflight, '$.inflight')).map(([k, v]) => [k, num(v, `$.inflight.${k}`)]),
            );
      const observation: Observation = {
        kind,
        ts,
        requestId: str(o.requestId, '$.requestId'),
        correlationId,
        server: str(o.server, '$.server'),
        promptTokens:
          o.promptTokens === null || o.promptTokens === undefined ? null : tokens(o.promptTokens, '$.promptTokens'),
        promptTokenCount: numOrNull(o.promptTokenCount, '$.promptTokenCount'),
        inflight,
        // optional fields appear only when the line has them (a bundle round-trips to the same observation)
        ...(o.promptForm !== undefined ? { promptForm: oneOfOrNull(o.promptForm, PROMPT_FORMS, '$.promptForm') } : {}),
        ...(o.promptTokensFrom !== undefined
          ? {
              promptTokensFrom:
                oneOfOrNull(o.promptTokensFrom, ['request', 'tokenizer'] as const, '$.promptTokensFrom') ?? 'request',
            }
          : {}),
        ...(o.unreadable !== undefined
          ? { unreadable: oneOfOrNull(o.unreadable, REQUEST_UNREADABLE_REASONS, '$.unreadable') }
          : {}),
      };
      if (o.digest === undefined || o.digest === null) return { observation, digest: null };
      return {
        observation,
        digest: {
          kind: 'decision',
          keys: decodeKeys(asObject(o.digest, '$.digest').keys, correlationId, history, '$.digest.keys'),
        },
      };
    }
    case 'stream-sequence': {
      const change = str(o.change, '$.change');
      if (!isStreamSequenceChange(change)) throw new DecodeError('$.change', `unknown stream change ${change}`);
      return {
        digest: null,
        observation: {
          kind,
          ts,
          server: str(o.server, '$.server'),
          rank: num(o.rank, '$.rank'),
          change,
          lost: num(o.lost, '$.lost'),
          filled: num(o.filled, '$.filled'),
        },
      };
    }
    case 'router-poll':
      return {
        digest: null,
        observation: {
          kind,
          ts,
          server: str(o.server, '$.server'),
          consumer: str(o.consumer, '$.consumer'),
          fromSeq: num(o.fromSeq, '$.fromSeq'),
          toSeq: num(o.toSeq, '$.toSeq'),
          dropped: num(o.dropped, '$.dropped'),
        },
      };
    case 'outcome': {
      const observation: Observation = {
        kind,
        ts,
        requestId: str(o.requestId, '$.requestId'),
        server: str(o.server, '$.server'),
        ok: boolOrNull(o.ok, '$.ok') ?? false,
        promptTokens: numOrNull(o.promptTokens, '$.promptTokens'),
        cachedTokens: numOrNull(o.cachedTokens, '$.cachedTokens'),
        latencyMs: numOrNull(o.latencyMs, '$.latencyMs'),
        ...(o.workerPromptTokens !== undefined && o.workerPromptTokens !== null
          ? { workerPromptTokens: tokens(o.workerPromptTokens, '$.workerPromptTokens') }
          : {}),
      };
      if (o.digest === undefined || o.digest === null) return { observation, digest: null };
      return {
        observation,
        digest: {
          kind: 'outcome',
          keys: decodeKeys(asObject(o.digest, '$.digest').keys, null, history, '$.digest.keys'),
        },
      };
    }
    case 'server-info':
      return {
        digest: null,
        observation: {
          kind,
          ts,
          server: str(o.server, '$.server'),
          hashAlgo: algoOrNull(o.hashAlgo, '$.hashAlgo'),
          tokensPerBlock: numOrNull(o.tokensPerBlock, '$.tokensPerBlock'),
          ...(o.kvCapacityBlocks !== undefined && o.kvCapacityBlocks !== null
            ? { kvCapacityBlocks: num(o.kvCapacityBlocks, '$.kvCapacityBlocks') }
            : {}),
        },
      };
    case 'router-config': {
      const source = str(o.source, '$.source');
      if (source !== 'debug-endpoint' && source !== 'orchestrator-log' && source !== 'config' && source !== 'simulator')
        throw new DecodeError('$.source', `unknown router-config source ${source}`);
      return {
        digest: null,
        observation: {
          kind,
          ts,
          source,
          routerType: strOrNull(o.routerType, '$.routerType'),
          tokensPerBlock: numOrNull(o.tokensPerBlock, '$.tokensPerBlock'),
          maxBatchSize: numOrNull(o.maxBatchSize, '$.maxBatchSize'),
          backfillBlockHashesOnFinish: boolOrNull(o.backfillBlockHashesOnFinish, '$.backfillBlockHashesOnFinish'),
          servers:
            o.servers === null || o.servers === undefined
              ? null
              : arr(o.servers, '$.servers').map((s, i) => str(s, `$.servers[${i}]`)),
          ...(o.profile !== undefined ? { profile: profileOrNull(o.profile, '$.profile') } : {}),
          ...(o.trackRoutedBlocks !== undefined
            ? { trackRoutedBlocks: boolOrNull(o.trackRoutedBlocks, '$.trackRoutedBlocks') }
            : {}),
          ...(o.loadWeight !== undefined ? { loadWeight: numOrNull(o.loadWeight, '$.loadWeight') } : {}),
          ...(o.loadCap !== undefined ? { loadCap: numOrNull(o.loadCap, '$.loadCap') } : {}),
          ...(o.readsEvents !== undefined
            ? { readsEvents: oneOfOrNull(o.readsEvents, ROUTER_EVENT_READS, '$.readsEvents') }
            : {}),
        },
      };
    }
    case 'router-server-fact': {
      const server = str(o.server, '$.server');
      const fact = str(o.fact, '$.fact');
      if (fact === 'polling-skipped') {
        return {
          digest: null,
          observation: {
            kind,
            ts,
            server,
            fact,
            routerTokensPerBlock: num(o.routerTokensPerBlock, '$.routerTokensPerBlock'),
            workerTokensPerBlock: num(o.workerTokensPerBlock, '$.workerTokensPerBlock'),
            divisible: boolOrNull(o.divisible, '$.divisible') ?? true,
          },
        };
      }
      if (fact === 'event-match') {
        return {
          digest: null,
          observation: {
            kind,
            ts,
            server,
            fact,
            totalMatch: num(o.totalMatch, '$.totalMatch'),
            eventMatch: num(o.eventMatch, '$.eventMatch'),
            eventBlocks: num(o.eventBlocks, '$.eventBlocks'),
            totalBlocks: num(o.totalBlocks, '$.totalBlocks'),
          },
        };
      }
      throw new DecodeError('$.fact', `unknown router-server-fact ${fact}`);
    }
    case 'router-state':
      return {
        digest: null,
        observation: {
          kind,
          ts,
          server: str(o.server, '$.server'),
          activeRequests: numOrNull(o.activeRequests, '$.activeRequests'),
          hashAlgo: algoOrNull(o.hashAlgo, '$.hashAlgo'),
          blockTableSize: numOrNull(o.blockTableSize, '$.blockTableSize'),
          polls: numOrNull(o.polls, '$.polls'),
          pollFailures: numOrNull(o.pollFailures, '$.pollFailures'),
        },
      };
    case 'router-score':
      return {
        digest: null,
        observation: {
          kind,
          ts,
          seq: num(o.seq, '$.seq'),
          requestId: str(o.requestId, '$.requestId'),
          correlationId: strOrNull(o.correlationId, '$.correlationId'),
          chosen: str(o.chosen, '$.chosen'),
          candidates: arr(o.candidates, '$.candidates').map((c, i) => {
            const co = asObject(c, `$.candidates[${i}]`);
            return {
              server: str(co.server, `$.candidates[${i}].server`),
              matchedTokens: num(co.matchedTokens, `$.candidates[${i}].matchedTokens`),
              activeRequests: num(co.activeRequests, `$.candidates[${i}].activeRequests`),
              score: num(co.score, `$.candidates[${i}].score`),
            };
          }),
        },
      };
    case 'poll-failure':
      return {
        digest: null,
        observation: { kind, ts, server: str(o.server, '$.server'), message: str(o.message, '$.message') },
      };
    case 'render-check':
      return { digest: null, observation: decodeRenderCheck(o, ts) };
    case 'sidecar-stats':
      return { digest: null, observation: decodeSidecarStats(o, ts) };
    case 'sidecar-load':
      return {
        digest: null,
        observation: {
          kind,
          ts,
          intervalMs: num(o.intervalMs, '$.intervalMs'),
          eventLoopDelayMs: num(o.eventLoopDelayMs, '$.eventLoopDelayMs'),
          utilization: num(o.utilization, '$.utilization'),
        },
      };
    case 'source-health':
      return {
        digest: null,
        observation: {
          kind,
          ts,
          source: str(o.source, '$.source'),
          up: boolOrNull(o.up, '$.up') ?? false,
          error: strOrNull(o.error, '$.error'),
        },
      };
    default:
      throw new DecodeError('$.kind', `unknown observation kind ${kind}`);
  }
}
