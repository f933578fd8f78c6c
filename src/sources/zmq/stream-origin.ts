// What a ZMQ stream's observations say of their origin (engine, hash space, the vLLM hashing the operator stated),
// and the converter that turns its batches into KV events: one per server, shared by its ranks.
import { streamHashes, type StreamEngine, type StreamOrigin } from '../../core/stream/stream-engine.js';
import { StreamEventConverter } from '../../core/stream/to-kv-events.js';
import type { VllmHashing } from '../../core/stream/vllm-hash-checker.js';

function hashingOf(engine: StreamEngine, stated: VllmHashing | undefined): VllmHashing | null {
  return engine === 'vllm' ? (stated ?? { algo: null, seed: null }) : null;
}

export function streamOrigin(engine: StreamEngine, stated: VllmHashing | undefined): StreamOrigin {
  const hashing = hashingOf(engine, stated);
  return {
    engine,
    hashes: streamHashes(engine),
    ...(hashing !== null ? { vllmHashing: { algo: hashing.algo, seedKnown: hashing.seed !== null } } : {}),
  };
}

/** `hitLevel`: vLLM/SGLang, the slowest cache level a request reuses (0 GPU, the default; 1 CPU; 2 disk) */
export function streamConverter(
  engine: StreamEngine,
  stated: VllmHashing | undefined,
  hitLevel?: number,
): StreamEventConverter {
  const hashing = hashingOf(engine, stated);
  return new StreamEventConverter(engine, {
    ...(hashing !== null ? { vllmHashing: hashing } : {}),
    ...(hitLevel !== undefined ? { hitLevel } : {}),
  });
}
