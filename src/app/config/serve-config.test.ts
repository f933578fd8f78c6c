import { describe, expect, it } from 'vitest';
import { buildConfig, parseDuration, parseHostPort, parseRelayFlag, relayHost } from './serve-config.js';

describe('serve config', () => {
  it('parses --relay ID=URL@[HOST:]PORT', () => {
    expect(parseRelayFlag('ctx0=http://10.0.0.5:8001@9401')).toEqual({
      id: 'ctx0',
      upstream: 'http://10.0.0.5:8001',
      host: null,
      port: 9401,
      replicaPorts: [],
    });
    expect(parseRelayFlag('ctx1=http://w1:8001/@10.1.2.3:9402')).toEqual({
      id: 'ctx1',
      upstream: 'http://w1:8001',
      host: '10.1.2.3',
      port: 9402,
      replicaPorts: [],
    });
    expect(parseRelayFlag('a=http://[::1]:8001@[::1]:9403')).toMatchObject({ host: '::1', port: 9403 });
  });

  it('parses one port per orchestrator replica: @9401,9411 and listen lists', () => {
    expect(parseRelayFlag('ctx0=http://w:8001@9401,9411')).toMatchObject({
      host: null,
      port: 9401,
      replicaPorts: [9411],
    });
    expect(parseRelayFlag('ctx0=http://w:8001@10.0.0.1:9401,9411,9421')).toMatchObject({
      host: '10.0.0.1',
      port: 9401,
      replicaPorts: [9411, 9421],
    });
    const c = buildConfig(
      {
        relays: [
          { id: 'ctx0', upstream: 'http://w:1', listen: [9401, 9411] },
          { id: 'ctx1', upstream: 'http://w:2', listen: '9402,9412' },
        ],
      },
      {},
    );
    expect(c.relays.map((r) => [r.port, ...r.replicaPorts])).toEqual([
      [9401, 9411],
      [9402, 9412],
    ]);
    expect(() =>
      buildConfig(
        {
          relays: [
            { id: 'ctx0', upstream: 'http://w:1', listen: [9401, 9402] },
            { id: 'ctx1', upstream: 'http://w:2', listen: 9402 },
          ],
        },
        {},
      ),
    ).toThrow('listen address 127.0.0.1:9402 is also used by relay ctx0');
  });

  it('refuses relay.consumer_by: remote addresses cannot keep exactly-once', () => {
    for (const mode of ['address', 'address-port']) {
      expect(() => buildConfig({ relay: { consumer_by: mode } }, {}, 'k.yaml')).toThrow(
        /k\.yaml: relay\.consumer_by: was removed.*its own relay port.*@9401,9411/,
      );
    }
  });

  it.each([
    ['ctx0=http://x:1', 'expected ID=URL@[HOST:]PORT'],
    ['ctx0=ftp://x:1@9401', 'is not an http(s) URL'],
    ['c t=http://x:1@9401', 'is not a server id'],
    ['ctx0=http://x:1@70000', "'70000' is not a port"],
  ])('rejects --relay %s naming the flag', (flag, message) => {
    expect(() => parseRelayFlag(flag)).toThrow(`--relay '${flag}'`);
    expect(() => parseRelayFlag(flag)).toThrow(message);
  });

  it('defaults to 0.0.0.0:9464 for the web listener and loopback for relay ports without a host', () => {
    const c = buildConfig(undefined, { relay: ['ctx0=http://w:8001@9401', 'ctx1=http://w:8001@0.0.0.0:9402'] });
    expect(c.listen).toEqual({ host: '0.0.0.0', port: 9464 });
    expect(c.relays[0]?.host).toBeNull();
    expect(relayHost(c.relays[0]!)).toBe('127.0.0.1');
    expect(relayHost(c.relays[1]!)).toBe('0.0.0.0');
    expect(c.relay.drainIntervalMs).toBe(250);
    expect(parseHostPort('x', ':9100')).toEqual({ host: '0.0.0.0', port: 9100 });
    // one grammar for serve and demo: the demo's empty host is loopback; IPv6 in brackets either way
    expect(parseHostPort('x', ':9100', '127.0.0.1')).toEqual({ host: '127.0.0.1', port: 9100 });
    expect(parseHostPort('x', '[::1]:9100', '127.0.0.1')).toEqual({ host: '::1', port: 9100 });
    expect(() => parseHostPort('--web.listen-address', 'localhost', '127.0.0.1')).toThrow(
      /--web.listen-address: 'localhost' is not HOST:PORT/,
    );
  });

  it('bounds the block tables per server (state.max_table_blocks, --state.max-table-blocks) and the relay consumers', () => {
    const relay = ['ctx0=http://w:8001@9401'];
    expect(buildConfig(undefined, { relay }).state.maxTableBlocks).toBe(4_000_000);
    expect(buildConfig(undefined, { relay }).relay.buffer.maxConsumers).toBe(64);
    expect(buildConfig({ state: { max_table_blocks: 500_000 }, relay: { max_consumers: 8 } }, { relay })).toMatchObject(
      { state: { maxTableBlocks: 500_000 }, relay: { buffer: { maxConsumers: 8 } } },
    );
    expect(
      buildConfig({ state: { max_table_blocks: 500_000 } }, { relay, maxTableBlocks: '2000000' }).state.maxTableBlocks,
    ).toBe(2_000_000);
    expect(() => buildConfig(undefined, { relay, maxTableBlocks: 'lots' })).toThrow(
      "--state.max-table-blocks: 'lots' is not a positive integer",
    );
    expect(() => buildConfig({ state: { max_table_blocks: 0 } }, { relay }, 'k.yaml')).toThrow(
      'k.yaml: state.max_table_blocks: 0 is not a positive integer',
    );
    expect(() => buildConfig({ state: { max_blocks: 1 } }, { relay }, 'k.yaml')).toThrow(
      'k.yaml: state.max_blocks: unknown key',
    );
  });

  it('takes router facts from router: and --router.profile / --router.tokens-per-block, naming bad values', () => {
    const relay = ['ctx0=http://w:8001@9401'];
    expect(buildConfig(undefined, { relay }).router).toEqual({
      type: null,
      readsEvents: null,
      profile: null,
      tokensPerBlock: null,
      maxBatchSize: null,
      loadWeight: null,
      trackRoutedBlocks: null,
      backfillBlockHashesOnFinish: null,
    });
    expect(
      buildConfig(
        { router: { profile: 'newest', tokens_per_block: 32, load_weight: 0.5, track_routed_blocks: false } },
        { relay },
      ).router,
    ).toMatchObject({ profile: 'newest', tokensPerBlock: 32, loadWeight: 0.5, trackRoutedBlocks: false });
    expect(
      buildConfig(
        { router: { profile: 'newest', tokens_per_block: 32 } },
        { relay, routerProfile: '2026-06', routerTokensPerBlock: '128' },
      ).router,
    ).toMatchObject({ profile: '2026-06', tokensPerBlock: 128 });
    expect(() => buildConfig(undefined, { relay, routerProfile: 'v2' })).toThrow(
      '--router.profile: "v2" is not one of 2026-06, newest',
    );
    expect(() => buildConfig({ router: { tokens_per_block: 0 } }, { relay }, 'k.yaml')).toThrow(
      'k.yaml: router.tokens_per_block: 0 is not a positive integer',
    );
    expect(() => buildConfig({ router: { tpb: 32 } }, { relay }, 'k.yaml')).toThrow('k.yaml: router.tpb: unknown key');
    // the router's kind, so it is judged by what it is meant to do
    expect(buildConfig({ router: { type: 'conversation', reads_events: 'none' } }, { relay }).router).toMatchObject({
      type: 'conversation',
      readsEvents: 'none',
    });
    expect(() => buildConfig({ router: { reads_events: 'zmq' } }, { relay }, 'k.yaml')).toThrow(
      'k.yaml: router.reads_events: "zmq" is not one of pull, stream, none',
    );
  });

  it("takes each worker's KV capacity from kv_capacity_blocks: and --kv-capacity ID=BLOCKS, naming bad values", () => {
    const relay = ['ctx0=http://w:8001@9401'];
    expect(buildConfig(undefined, { relay }).kvCapacityBlocks).toEqual({});
    expect(
      buildConfig({ kv_capacity_blocks: { ctx0: 8192, ctx1: 4096 } }, { relay, kvCapacity: ['ctx1=65536'] })
        .kvCapacityBlocks,
    ).toEqual({ ctx0: 8192, ctx1: 65_536 });
    expect(() => buildConfig({ kv_capacity_blocks: { ctx0: -1 } }, { relay }, 'k.yaml')).toThrow(
      'k.yaml: kv_capacity_blocks.ctx0: -1 is not a positive integer',
    );
    expect(() => buildConfig(undefined, { relay, kvCapacity: ['ctx0'] })).toThrow(
      "--kv-capacity 'ctx0': expected ID=BLOCKS",
    );
    expect(() => buildConfig(undefined, { relay, kvCapacity: ['ctx0=many'] })).toThrow("--kv-capacity 'ctx0=many'");
  });

  it('merges file lists with flags; flags override scalars', () => {
    const c = buildConfig(
      {
        web: { listen_address: '127.0.0.1:9000' },
        relays: [{ id: 'ctx0', upstream: 'http://w0:8001', listen: 9401 }],
        relay: {
          drain_interval: '100ms',
          buffer_max_bytes: '64MiB',
          upstream_keep_alive: '3s',
          retain_read_bytes: '1GiB',
        },
        ctx: [{ id: 'ctx5', url: 'http://w5:8001', prometheus: true }],
        router_debug: 'http://router:8000/debug/router',
        requests: 'perf.jsonl',
      },
      { relay: ['ctx1=http://w1:8001@9402'], listenAddress: '127.0.0.1:9100', requests: ['openai:client.jsonl'] },
      'k.yaml',
    );
    expect(c.listen).toEqual({ host: '127.0.0.1', port: 9100 });
    expect(c.relays.map((r) => r.id)).toEqual(['ctx0', 'ctx1']);
    expect(c.relay).toMatchObject({
      drainIntervalMs: 100,
      buffer: { maxBytes: 64 * 1024 * 1024 },
      upstreamKeepAliveMs: 3000,
      retainReadBytes: 1024 ** 3,
    });
    // every relay of the process shares one read history, 256 MiB unless stated
    expect(buildConfig(undefined, { relay: ['ctx1=http://w1:8001@9402'] }).relay.retainReadBytes).toBe(256 * 1024 ** 2);
    expect(c.ctx[0]).toEqual({ id: 'ctx5', url: 'http://w5:8001', events: 'none', prometheus: true });
    expect(c.routerDebug).toEqual({ url: 'http://router:8000/debug/router', intervalMs: 1000 });
    expect(c.requestLogs).toEqual([
      { path: 'perf.jsonl', format: 'auto' },
      { path: 'client.jsonl', format: 'openai' },
    ]);
  });

  it.each([
    [{ relays: [{ id: 'ctx0', upstream: 'http://w:1' }] }, 'k.yaml: relays[0].listen: missing'],
    [{ relay: { drain_interval: 'soon' } }, "k.yaml: relay.drain_interval: 'soon' is not a positive duration"],
    [{ relay: { retain_read_bytes: 'lots' } }, "k.yaml: relay.retain_read_bytes: 'lots' is not a positive size"],
    [
      { ctx: [{ id: 'a', url: 'http://w:1', events: 'steal' }] },
      "k.yaml: ctx[0].events: 'steal' is not none or exclusive",
    ],
    [{ web: { listen_adress: ':1' } }, 'k.yaml: web.listen_adress: unknown key'],
    [
      { relays: [{ id: 'a', upstream: 'http://w:1', listen: 9401 }], ctx: [{ id: 'a', url: 'http://w:2' }] },
      "server id 'a' is used twice",
    ],
    [
      {
        relays: [
          { id: 'a', upstream: 'http://w:1', listen: 9401 },
          { id: 'b', upstream: 'http://w:2', listen: 9401 },
        ],
      },
      'listen address 127.0.0.1:9401 is also used by relay a',
    ],
    [{ relays: [{ id: 'a', upstream: 'http://w:1', listen: 9464 }] }, 'port 9464 is the web listen port'],
    [[1, 2], 'k.yaml: expected a mapping at the top level'],
  ])('rejects %j naming the key', (doc, message) => {
    expect(() => buildConfig(doc, {}, 'k.yaml')).toThrow(message);
  });

  it('limits relayed request bodies to 64 MiB unless relay.max_request_bytes or the flag says otherwise', () => {
    expect(buildConfig(undefined, {}).relay.maxRequestBytes).toBe(64 * 1024 * 1024);
    expect(buildConfig({ relay: { max_request_bytes: '8MiB' } }, {}).relay.maxRequestBytes).toBe(8 * 1024 * 1024);
    expect(
      buildConfig({ relay: { max_request_bytes: '8MiB' } }, { relayMaxRequestBytes: '1024' }).relay.maxRequestBytes,
    ).toBe(1024);
    expect(() => buildConfig({ relay: { max_request_bytes: 'huge' } }, {}, 'k.yaml')).toThrow(
      "k.yaml: relay.max_request_bytes: 'huge' is not a positive size",
    );
    expect(() => buildConfig(undefined, { relayMaxRequestBytes: '0' })).toThrow(
      "--relay.max-request-bytes: '0' is not a positive size",
    );
  });

  it('reads a flag with the grammar of the key it stands for', () => {
    // the same text accepted, and the same value refused, by the key and by its flag
    expect(buildConfig({ state: { max_table_blocks: '4096' } }, {}).state.maxTableBlocks).toBe(4096);
    expect(buildConfig(undefined, { maxTableBlocks: '4096' }).state.maxTableBlocks).toBe(4096);
    expect(() => buildConfig({ state: { max_table_blocks: 0 } }, {}, 'kvs.yaml')).toThrow(
      'kvs.yaml: state.max_table_blocks: 0 is not a positive integer',
    );
    expect(() => buildConfig(undefined, { maxTableBlocks: '0' })).toThrow(
      '--state.max-table-blocks: 0 is not a positive integer',
    );
    expect(buildConfig({ kv_capacity_blocks: { ctx0: '65536' } }, {}).kvCapacityBlocks).toEqual({ ctx0: 65536 });
    expect(() => buildConfig({ orchestrator_log: '' }, {}, 'kvs.yaml')).toThrow(
      "kvs.yaml: orchestrator_log: '' is not a file path",
    );
    expect(() => buildConfig(undefined, { orchestratorLog: '' })).toThrow("--orchestrator-log: '' is not a file path");
    expect(() => buildConfig(undefined, { requests: ['perf-metrics:'] })).toThrow(
      "--requests 'perf-metrics:': '' is not a file path",
    );
  });

  it('needs --ctx for --events exclusive', () => {
    expect(() => buildConfig(undefined, { events: 'exclusive' })).toThrow('--events exclusive');
    expect(buildConfig(undefined, { events: 'exclusive', ctx: ['c=http://w:1'] }).ctx[0]?.events).toBe('exclusive');
  });

  it.each([
    ['250ms', 250],
    ['5s', 5000],
    ['1.5m', 90_000],
    [750, 750],
  ])('duration %j = %d ms', (v, ms) => expect(parseDuration('x', v)).toBe(ms));
});
