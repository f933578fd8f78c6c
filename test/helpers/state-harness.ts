// A state model with its digester told of the servers, for the reducers' own tests: real tables, real block keys,
// and builders for the observations a relay would give.
import { DEFAULT_THRESHOLDS } from '../../src/core/diagnosis/thresholds.js';
import { wireHashChain } from '../../src/core/hashing/block-key.js';
import type { DecisionObservation, Observation, OutcomeObservation } from '../../src/core/observe/observation.js';
import type { CounterKey } from '../../src/core/state/counter-schema.js';
import type { DecisionKeys } from '../../src/core/state/observation-digester.js';
import { DEFAULT_LIMITS, type SentinelLimits } from '../../src/core/state/sentinel-options.js';
import { StateModel } from '../../src/core/state/state-model.js';
import type { KvEvent } from '../../src/core/wire/kv-event.js';
import { kvEvent, storedBlock } from './kv-event-builders.js';

export const BLOCK = 4;

export interface HarnessOptions {
  readonly servers?: readonly string[];
  /** the router's tokens_per_block as a source states it; null: never stated */
  readonly routerTokensPerBlock?: number | null;
  readonly maxBatchSize?: number | null;
  readonly limits?: Partial<SentinelLimits>;
}

/** A relay's model over `servers` (v1 keys, BLOCK-token blocks), the router's settings stated unless told not. */
export function harnessModel(options: HarnessOptions = {}): StateModel {
  const servers = options.servers ?? ['ctx0', 'ctx1', 'ctx2'];
  const model = new StateModel('relay', DEFAULT_THRESHOLDS, { ...DEFAULT_LIMITS, ...options.limits }, null);
  see(model, {
    kind: 'router-config',
    ts: 0,
    source: 'config',
    routerType: 'kv_cache_aware',
    tokensPerBlock: options.routerTokensPerBlock === undefined ? BLOCK : options.routerTokensPerBlock,
    maxBatchSize: options.maxBatchSize === undefined ? 8 : options.maxBatchSize,
    backfillBlockHashesOnFinish: false,
    servers: [...servers],
  });
  for (const server of servers)
    see(model, { kind: 'server-info', ts: 0, server, hashAlgo: 'v1_block_key', tokensPerBlock: BLOCK });
  return model;
}

/** The digester sees one observation as the state would; returns the decision keys it computed, if any. */
export function see(model: StateModel, obs: Observation): DecisionKeys | null {
  const digest = model.digester.digest(obs);
  model.digester.observe(obs, digest);
  return digest !== null && (digest.kind === 'decision' || digest.kind === 'outcome') ? digest.keys : null;
}

/** A prompt of `blocks` whole blocks: a shared prefix of `shared` blocks, then ids of its own from `own`. */
export function prompt(blocks: number, shared = 0, own = 1_000): Uint32Array {
  return Uint32Array.from({ length: blocks * BLOCK }, (_, i) => (i < shared * BLOCK ? 11 + i : own + i));
}

/** The stored event of every block of `tokens` (a worker that served the prompt). */
export function storedEvent(tokens: Uint32Array, eventId = 0): KvEvent {
  const keys = wireHashChain(tokens, BLOCK, 'v1_block_key');
  const blocks = keys.map((key, j) => storedBlock(key, 0, [...tokens.subarray(j * BLOCK, (j + 1) * BLOCK)]));
  return kvEvent({ type: 'stored', parentHash: null, blocks }, { eventId });
}

export function decisionOf(
  requestId: string,
  server: string,
  fields: Partial<Omit<DecisionObservation, 'kind' | 'requestId' | 'server'>> = {},
): DecisionObservation {
  const promptTokens = fields.promptTokens ?? null;
  return {
    kind: 'decision',
    ts: 1_000,
    requestId,
    correlationId: null,
    server,
    promptTokens,
    promptTokenCount: promptTokens?.length ?? null,
    inflight: null,
    ...fields,
  };
}

export function outcomeOf(
  requestId: string,
  server: string,
  fields: Partial<Omit<OutcomeObservation, 'kind' | 'requestId' | 'server'>> = {},
): OutcomeObservation {
  return {
    kind: 'outcome',
    ts: 1_050,
    requestId,
    server,
    ok: true,
    promptTokens: 16,
    cachedTokens: 0,
    latencyMs: 5,
    ...fields,
  };
}

/** A counter's total over all time (the harness's model keeps no window). */
export function totalOf(model: StateModel, key: CounterKey): number {
  return model.counters.total(key, Number.MAX_SAFE_INTEGER);
}
