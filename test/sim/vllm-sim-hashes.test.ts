// The simulator's vLLM hash option (only a vllm-format publisher can carry vLLM's hashes), and a publisher stopped mid-flush.
import { describe, expect, it } from 'vitest';
import { ZmqKvPublisher } from '../../src/sim/live/zmq-kv-publisher.js';
import { presetConfig, SimConfigError } from '../../src/sim/sim-config.js';
import { kvEvent, storedBlock } from '../helpers/kv-event-builders.js';

describe('ctx.vllm_hashes', () => {
  it('is taken with the vllm publisher and refused with any other', () => {
    expect(
      presetConfig('healthy', ['ctx.kv_events_publisher=vllm', 'ctx.vllm_hashes=sha256_cbor_int']).ctx.vllmHashes,
    ).toBe('sha256_cbor_int');
    expect(presetConfig('healthy').ctx.vllmHashes).toBe('sim');
    expect(() => presetConfig('healthy', ['ctx.kv_events_publisher=sglang', 'ctx.vllm_hashes=sha256_cbor'])).toThrow(
      SimConfigError,
    );
    expect(() => presetConfig('healthy', ['ctx.vllm_hashes=sha256_cbor'])).toThrow(
      /ctx\.vllm_hashes=sha256_cbor: needs ctx\.kv_events_publisher=vllm/,
    );
    expect(
      () =>
        new ZmqKvPublisher({ format: 'vllm-array', ranks: 1, blockSize: 4, vllmHashes: { seed: '0', ints: false } }),
    ).toThrow(/vllmHashes needs format vllm/);
  });
});

describe('ZmqKvPublisher.stop', () => {
  it('drops a flush scheduled just before it instead of sending on a closed socket', async () => {
    const pub = new ZmqKvPublisher({ format: 'vllm', ranks: 1, blockSize: 2, vllmHashes: { seed: '0', ints: false } });
    await pub.start();
    pub.publish(0, kvEvent({ type: 'stored', parentHash: null, blocks: [storedBlock(1n, 0, [1, 2])] }));
    await pub.stop();
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    expect(pub.batchesSent).toBe(0);
  });
});
