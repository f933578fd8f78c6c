import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.js';
import { buildConfig } from './serve-config.js';

describe('--zmq and zmq: configuration', () => {
  it("parses the flag with its options and the file list; ids may be a relay's", () => {
    const c = buildConfig(
      {
        relays: [{ id: 'ctx0', upstream: 'http://10.0.0.5:8000', listen: 9401 }],
        zmq: [
          {
            id: 'ctx1',
            endpoint: 'tcp://10.0.0.6:5557',
            engine: 'sglang',
            ranks: 4,
            replay_endpoint: 'tcp://10.0.0.6:5600',
            topic: 'kv',
          },
        ],
      },
      { zmq: ['ctx0=tcp://10.0.0.5:5557,engine=vllm,ranks=2,replay=tcp://10.0.0.5:5600'] },
    );
    expect(c.zmq).toEqual([
      {
        id: 'ctx1',
        endpoint: 'tcp://10.0.0.6:5557',
        replay: 'tcp://10.0.0.6:5600',
        engine: 'sglang',
        ranks: 4,
        topic: 'kv',
      },
      {
        id: 'ctx0',
        endpoint: 'tcp://10.0.0.5:5557',
        replay: 'tcp://10.0.0.5:5600',
        engine: 'vllm',
        ranks: 2,
        topic: '',
      },
    ]);
    expect(buildConfig(undefined, { zmq: ['w=tcp://h:5557'] }).zmq[0]).toMatchObject({
      engine: 'trtllm',
      ranks: 1,
      replay: null,
    });
  });

  it('refuses what cannot be subscribed, naming the flag or key', () => {
    const bad = (flag: string): string => {
      try {
        buildConfig(undefined, { zmq: [flag] });
      } catch (err) {
        if (err instanceof ConfigError) return err.message;
        throw err;
      }
      return 'accepted';
    };
    expect(bad('ctx0=tcp://*:5557')).toMatch(/--zmq 'ctx0=tcp:\/\/\*:5557' endpoint: .*bind address/);
    // a sidecar is never in its publisher's process: its SUB could not connect there (and would stop the daemon)
    expect(bad('ctx0=inproc://kv')).toMatch(/endpoint: .*inproc:\/\/ reaches only sockets of the same process/);
    expect(bad('ctx0=tcp://h:65535,ranks=2')).toMatch(/ranks: .*65535|ports 65535\.\.65536/);
    expect(bad('ctx0=tcp://h:5557,engine=tgi')).toMatch(/engine: "tgi" is not one of trtllm, vllm, sglang/);
    expect(bad('ctx0=tcp://h:5557,ranks=0')).toMatch(/ranks/);
    expect(bad('ctx0=tcp://h:5557,hwm=5')).toMatch(/'hwm=5' is not replay=/);
    expect(bad('ctx0=http://h:5557')).toMatch(/expected tcp:\/\/HOST:PORT/);
    expect(() => buildConfig({ zmq: [{ id: 'a', endpoint: 'tcp://h:1', hwm: 3 }] }, {})).toThrow(
      /zmq\[0\]\.hwm: unknown key/,
    );
    expect(() => buildConfig(undefined, { zmq: ['a=tcp://h:1', 'a=tcp://h:2'] })).toThrow(/has two streams/);
  });

  it("takes a vLLM stream's hash algorithm and PYTHONHASHSEED from the flag or the file, and refuses them elsewhere", () => {
    const c = buildConfig(
      { zmq: [{ id: 'v1', endpoint: 'tcp://h:5557', engine: 'vllm', hash_algo: 'sha256_cbor', python_hash_seed: 0 }] },
      {
        zmq: [
          'v0=tcp://h:6000,engine=vllm,hash=sha256_cbor,seed=12345',
          'v2=tcp://h:7000,engine=vllm,hash=sha256',
          'v3=tcp://h:8000,engine=vllm',
        ],
      },
    );
    expect(c.zmq.map((z) => [z.id, z.vllmHashing])).toEqual([
      ['v1', { algo: 'sha256_cbor', seed: '0' }],
      ['v0', { algo: 'sha256_cbor', seed: '12345' }],
      ['v2', { algo: 'sha256', seed: null }],
      ['v3', undefined],
    ]);
    expect(() => buildConfig(undefined, { zmq: ['t=tcp://h:1,hash=sha256_cbor'] })).toThrow(
      /--zmq 't=tcp:\/\/h:1,hash=sha256_cbor' hash: .*vLLM's \(engine=vllm\), not trtllm's/,
    );
    expect(() => buildConfig(undefined, { zmq: ['v=tcp://h:1,engine=vllm,hash=md5'] })).toThrow(
      /"md5" is not one of sha256, sha256_cbor, xxhash, xxhash_cbor, builtin/,
    );
    expect(() =>
      buildConfig({ zmq: [{ id: 'v', endpoint: 'tcp://h:1', engine: 'vllm', python_hash_seed: -1 }] }, {}),
    ).toThrow(/zmq\[0\]\.python_hash_seed: -1 is not a PYTHONHASHSEED value/);
  });

  it('one grammar per key: the flag and the file refuse a value alike, the file naming its key, the flag its option', () => {
    const file = (entry: Record<string, unknown>): string => {
      try {
        buildConfig({ zmq: [{ id: 'a', endpoint: 'tcp://h:1', ...entry }] }, {}, 'kvs.yaml');
      } catch (err) {
        return (err as Error).message;
      }
      return 'accepted';
    };
    const flag = (options: string): string => {
      try {
        buildConfig(undefined, { zmq: [`a=tcp://h:1,${options}`] });
      } catch (err) {
        return (err as Error).message;
      }
      return 'accepted';
    };
    expect(file({ ranks: 300 })).toBe('kvs.yaml: zmq[0].ranks: 300 is not a rank count (1..256)');
    expect(flag('ranks=300')).toBe('--zmq \'a=tcp://h:1,ranks=300\' ranks: "300" is not a rank count (1..256)');
    expect(file({ engine: 'vllm', hash_algo: 'md5' })).toMatch(/^kvs\.yaml: zmq\[0\]\.hash_algo: "md5" is not one of/);
    expect(flag('engine=vllm,hash=md5')).toMatch(/^--zmq '.*' hash: "md5" is not one of/);
    expect(file({ replay_endpoint: 'tcp://*:2' })).toMatch(
      /^kvs\.yaml: zmq\[0\]\.replay_endpoint: 'tcp:\/\/\*:2': \* is/,
    );
    expect(flag('replay=tcp://*:2')).toMatch(/^--zmq '.*' replay: 'tcp:\/\/\*:2': \* is/);
    expect(file({ hit_tier: 'cpu' })).toMatch(/^kvs\.yaml: zmq\[0\]\.hit_tier: TensorRT-LLM's tables/);
    expect(flag('hit=cpu')).toMatch(/^--zmq '.*' hit_tier: TensorRT-LLM's tables/);
    // the same values read the same way
    const fromFile = buildConfig(
      { zmq: [{ id: 'a', endpoint: 'tcp://h:1', engine: 'vllm', ranks: '2', topic: 'kv', python_hash_seed: 7 }] },
      {},
    ).zmq[0];
    const fromFlag = buildConfig(undefined, { zmq: ['a=tcp://h:1,engine=vllm,ranks=2,topic=kv,seed=7'] }).zmq[0];
    expect(fromFlag).toEqual(fromFile);
  });

  it('hit_tier / hit= name the slowest medium a reused block loads from (vLLM, SGLang only)', () => {
    const c = buildConfig(
      { zmq: [{ id: 'a', endpoint: 'tcp://10.0.0.6:5557', engine: 'sglang', hit_tier: 'disk' }] },
      { zmq: ['b=tcp://10.0.0.5:5557,engine=vllm,hit=cpu', 'c=tcp://10.0.0.7:5557,engine=vllm'] },
    );
    expect(c.zmq.map((z) => z.hitLevel)).toEqual([2, 1, undefined]);
    expect(() => buildConfig({}, { zmq: ['b=tcp://10.0.0.5:5557,engine=vllm,hit=nvme'] })).toThrow(
      /hit_tier.*gpu, cpu, disk/,
    );
    expect(() => buildConfig({}, { zmq: ['b=tcp://10.0.0.5:5557,hit=cpu'] })).toThrow(ConfigError);
  });
});
