// The engines whose workers publish KV events over ZMQ, and what differs between them for a subscriber.
// Frames are the same for all three ([topic, seq u64 BE, msgpack batch]); the batch and event shapes vary by
// version, not by engine, so one decoder reads them all (decode-batch.ts). What the engine decides is what the
// hashes mean: TensorRT-LLM's streaming path publishes the V2 manager's sha256 key truncated to 64 bits (as signed
// int64), which kvsentinel recomputes; vLLM (sha256 / sha256_cbor / builtin, optionally xxhash, seeded per
// process unless PYTHONHASHSEED is set) and SGLang (Python hash of the page, or a build-specific chain) publish keys
// kvsentinel does not reproduce in its tables' hash space, so their blocks are re-keyed from their token ids
// (rekeyer.ts); vLLM's own hashes are still checked where the deployment's hashing is recomputable (sha256_cbor,
// vllm-hash-checker.ts).
import type { VllmHashAlgo } from '../hashing/vllm-block-hash.js';

export const STREAM_ENGINES = ['trtllm', 'vllm', 'sglang'] as const;
export type StreamEngine = (typeof STREAM_ENGINES)[number];

export function isStreamEngine(value: unknown): value is StreamEngine {
  return typeof value === 'string' && (STREAM_ENGINES as readonly string[]).includes(value);
}

/** How a stream's block hashes enter the tables: as published (verifiable), or re-keyed from their tokens. */
export type StreamHashes = 'native' | 'rekeyed';

export function streamHashes(engine: StreamEngine): StreamHashes {
  return engine === 'trtllm' ? 'native' : 'rekeyed';
}

/** Where a batch of worker events came from, when it was not a drain of /kv_cache_events. */
export interface StreamOrigin {
  readonly engine: StreamEngine;
  readonly hashes: StreamHashes;
  /** vLLM: the hashing the operator stated (the seed itself stays out of observations and bundles) */
  readonly vllmHashing?: { readonly algo: VllmHashAlgo | null; readonly seedKnown: boolean };
}
