// Hash checks of streamed events: TensorRT-LLM's keys are recomputed, a root that does not recompute is
// unverifiable (the stream carries no cache_salt), re-keyed engines are unverifiable throughout.
import { describe, expect, it } from 'vitest';
import { kvEvent, storedBlock } from '../../../test/helpers/kv-event-builders.js';
import { truncateKeyToU64, v2Chain } from '../hashing/v2-sha256.js';
import type { WorkerEventsObservation } from '../observe/observation.js';
import type { StreamOrigin } from '../stream/stream-engine.js';
import { ObservationDigester } from './observation-digester.js';

const TOKENS = [
  [1, 2, 3, 4],
  [5, 6, 7, 8],
  [9, 10, 11, 12],
];
const KEYS = v2Chain(TOKENS.flat(), 4).map(truncateKeyToU64);

function checks(hashes: readonly bigint[], stream: StreamOrigin): string[] {
  const obs: WorkerEventsObservation = {
    kind: 'worker-events',
    ts: 0,
    server: 'ctx0',
    firstSeq: 0,
    stream,
    events: [
      kvEvent(
        { type: 'stored', parentHash: null, blocks: hashes.map((h, i) => storedBlock(h, 0, TOKENS[i])) },
        { hashAlgo: 'v2_sha256_64' },
      ),
    ],
  };
  const d = new ObservationDigester().digest(obs);
  return d?.kind === 'worker-events' ? [...(d.digest.stored[0]?.checks ?? [])] : [];
}

describe('hash checks of streamed events', () => {
  const trtllm: StreamOrigin = { engine: 'trtllm', hashes: 'native' };
  it('recomputes TensorRT-LLM stream keys', () => {
    expect(checks(KEYS, trtllm)).toEqual(['match', 'match', 'match']);
    // a wrong key after a confirmed root is a real mismatch
    expect(checks([KEYS[0]!, KEYS[1]! ^ 1n, KEYS[2]!], trtllm)).toEqual(['match', 'mismatch', 'unverifiable']);
  });

  it('calls a root that does not recompute unverifiable (a salted request), never a mismatch', () => {
    expect(checks([KEYS[0]! ^ 1n, KEYS[1]!, KEYS[2]!], trtllm)).toEqual([
      'unverifiable',
      'unverifiable',
      'unverifiable',
    ]);
  });

  it('verifies nothing of a re-keyed engine', () => {
    expect(checks(KEYS, { engine: 'vllm', hashes: 'rekeyed' })).toEqual([
      'unverifiable',
      'unverifiable',
      'unverifiable',
    ]);
  });
});
