import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.js';
import { buildConfig } from './serve-config.js';

describe('--zmq-bind and zmq_bind: configuration', () => {
  it('parses the flag with its options and the file list (vLLM by default)', () => {
    const c = buildConfig(
      {
        zmq_bind: [{ endpoint: 'tcp://*:5557', ranks: 2, topic: 'kv@', hash_algo: 'sha256_cbor', python_hash_seed: 0 }],
      },
      { zmqBind: ['tcp://0.0.0.0:6000,engine=sglang,forward=tcp://127.0.0.1:6100', 'ipc:///tmp/kv-events'] },
    );
    expect(c.zmqBind).toEqual([
      {
        endpoint: 'tcp://*:5557',
        engine: 'vllm',
        ranks: 2,
        topic: 'kv@',
        vllmHashing: { algo: 'sha256_cbor', seed: '0' },
      },
      { endpoint: 'tcp://0.0.0.0:6000', engine: 'sglang', ranks: 1, topic: '', forward: 'tcp://127.0.0.1:6100' },
      { endpoint: 'ipc:///tmp/kv-events', engine: 'vllm', ranks: 1, topic: '' },
    ]);
  });

  it('refuses what cannot be bound, naming the flag or key', () => {
    const bad: [Parameters<typeof buildConfig>[0], Parameters<typeof buildConfig>[1], RegExp][] = [
      [undefined, { zmqBind: ['http://x:1'] }, /--zmq-bind 'http:\/\/x:1' endpoint: .*tcp:\/\/HOST:PORT/],
      [undefined, { zmqBind: ['tcp://*:65535,ranks=2'] }, /ports 65535\.\.65536/],
      [undefined, { zmqBind: ['tcp://*:5557,replay=tcp://h:1'] }, /'replay=tcp:\/\/h:1' is not engine=/],
      [undefined, { zmqBind: ['tcp://*:5557', 'tcp://*:5557'] }, /bound twice/],
      [{ zmq_bind: [{ endpoint: 'tcp://*:5557', id: 'x' }] }, {}, /zmq_bind\[0\]\.id: unknown key/],
      [{ zmq_bind: [{ endpoint: 'tcp://*:5557', engine: 'sglang', hash_algo: 'sha256' }] }, {}, /vLLM's/],
      [undefined, { zmqBind: ['tcp://*:5557,forward=tcp://*:5558'] }, /forward: 'tcp:\/\/\*:5558' is a bind address/],
      [undefined, { zmqBind: ['tcp://*:5557,forward=scheduler:5558'] }, /forward: 'scheduler:5558': expected tcp/],
      [{ zmq_bind: [{ endpoint: 'ipc:///tmp/a', forward: 'ipc:///tmp/a' }] }, {}, /is the address kvsentinel binds/],
    ];
    for (const [file, flags, message] of bad) {
      expect(() => buildConfig(file, flags)).toThrow(ConfigError);
      expect(() => buildConfig(file, flags)).toThrow(message);
    }
  });
});
