import { describe, expect, it } from 'vitest';
import type { Observation } from '../observe/observation.js';
import { miniCluster } from '../../../test/helpers/mini-cluster.js';
import { ObservationDigester } from '../state/observation-digester.js';
import { decodeBundleRecord, encodeBundleRecord, type BundleRecord } from './bundle-codec.js';
import { KeyHistory } from './bundle-keys.js';

function recordAll(includePrompts: boolean): { records: BundleRecord[]; lines: string[] } {
  const digester = new ObservationDigester();
  const history = new KeyHistory(64);
  const records: BundleRecord[] = [];
  const lines: string[] = [];
  for (const observation of miniCluster({ routing: 'random', trajectories: 10, turns: 4, routerTokensPerBlock: 8 })) {
    const digest = digester.digest(observation);
    digester.observe(observation, digest);
    records.push({ observation, digest });
    lines.push(encodeBundleRecord({ observation, digest }, history, includePrompts));
  }
  return { records, lines };
}

/** the lines decoded in order through one key history, as a replay reads a bundle (line numbers from 1) */
function decodeAll(lines: readonly string[]): BundleRecord[] {
  const history = new KeyHistory(64);
  return lines.map((line, i) => {
    const decoded = decodeBundleRecord(line, i + 1, history);
    if (!decoded.ok) throw new Error(decoded.issue.message);
    return decoded.record;
  });
}

describe('bundle codec', () => {
  it('round-trips observations and digests; without --include-prompts no token id leaves', () => {
    const { records, lines } = recordAll(false);
    decodeAll(lines).forEach((decoded, i) => {
      const original = records[i]!;
      const obs = decoded.observation;
      expect(obs.kind).toBe(original.observation.kind);
      if (obs.kind === 'decision' && original.observation.kind === 'decision') {
        expect(obs.promptTokens).toBeNull();
        expect(obs.promptTokenCount).toBe(original.observation.promptTokens!.length);
        expect(decoded.digest).toEqual(original.digest);
      } else if (obs.kind === 'worker-events' && original.observation.kind === 'worker-events') {
        const blocks = obs.events.flatMap((e) => (e.data.type === 'stored' ? e.data.blocks : []));
        expect(blocks.every((b) => b.tokens.length === 0)).toBe(true);
        const originalHashes = original.observation.events.flatMap((e) =>
          e.data.type === 'stored' ? e.data.blocks.map((b) => b.blockHash) : [],
        );
        expect(blocks.map((b) => b.blockHash)).toEqual(originalHashes);
        expect(decoded.digest).toEqual(original.digest);
      } else {
        expect(obs).toEqual(original.observation);
      }
    });
    // follow-up turns share their prefix keys with the previous turn instead of repeating them
    expect(lines.some((l) => l.includes('"p":'))).toBe(true);
    expect(lines.join('\n')).not.toMatch(/"tokens":\[/);
  });

  it("round-trips counts in the worker's blocks (perf-metrics request logs) and an adopted router block size", () => {
    const observations: Observation[] = [
      {
        kind: 'router-config',
        ts: 1,
        source: 'orchestrator-log',
        routerType: null,
        tokensPerBlock: 64,
        tokensPerBlockAdopted: true,
        maxBatchSize: null,
        backfillBlockHashesOnFinish: null,
        servers: null,
      },
      {
        kind: 'decision',
        ts: 2,
        requestId: 'r',
        correlationId: null,
        server: 'ctx0',
        promptTokens: null,
        promptTokenCount: null,
        inflight: null,
        promptBlocks: 10,
      },
      {
        kind: 'outcome',
        ts: 2,
        requestId: 'r',
        server: 'ctx0',
        ok: true,
        promptTokens: null,
        cachedTokens: null,
        promptBlocks: 10,
        cachedBlocks: 8,
        latencyMs: null,
      },
    ];
    const history = new KeyHistory(64);
    const decodeHistory = new KeyHistory(64);
    observations.forEach((observation, i) => {
      const decoded = decodeBundleRecord(
        encodeBundleRecord({ observation, digest: null }, history, false),
        i + 1,
        decodeHistory,
      );
      if (!decoded.ok) throw new Error(decoded.issue.message);
      expect(decoded.record.observation).toEqual(observation);
    });
  });

  it('with --include-prompts the tokens survive exactly', () => {
    const { records, lines } = recordAll(true);
    expect(decodeAll(lines).map((r) => r.observation)).toEqual(records.map((r) => r.observation));
  });

  it('round-trips what a ZMQ stream source observes: the stream origin and its seq changes', () => {
    const records: BundleRecord[] = [
      {
        observation: { kind: 'stream-sequence', ts: 1, server: 'ctx0', rank: 1, change: 'gap', lost: 2, filled: 3 },
        digest: null,
      },
      {
        observation: { kind: 'stream-sequence', ts: 2, server: 'ctx0', rank: 0, change: 'reset', lost: 0, filled: 0 },
        digest: null,
      },
      {
        // a gap the subscriber's own backlog explains: the replay of the bundle blames the sidecar as the live run did
        observation: {
          kind: 'stream-sequence',
          ts: 2,
          server: 'ctx0',
          rank: 0,
          change: 'gap',
          lost: 40,
          filled: 0,
          subscriberBehindMs: 2_500,
        },
        digest: null,
      },
      {
        observation: {
          kind: 'worker-events',
          ts: 3,
          server: 'ctx0',
          firstSeq: 0,
          stream: { engine: 'vllm', hashes: 'rekeyed' },
          events: [
            {
              eventId: null,
              data: { type: 'removed', blockHashes: [2n ** 63n + 5n] },
              windowSize: null,
              attentionDpRank: 1,
              hashAlgo: 'v2_sha256_64',
              layerGroupId: null,
            },
          ],
        },
        digest: null,
      },
      {
        // the stated vLLM hashing travels (whether a seed was given, never the seed itself)
        observation: {
          kind: 'worker-events',
          ts: 4,
          server: 'ctx1',
          firstSeq: 0,
          stream: { engine: 'vllm', hashes: 'rekeyed', vllmHashing: { algo: 'sha256_cbor', seedKnown: true } },
          events: [
            {
              eventId: null,
              data: { type: 'all_cleared' },
              windowSize: null,
              attentionDpRank: null,
              hashAlgo: 'v2_sha256_64',
              layerGroupId: null,
            },
          ],
        },
        digest: null,
      },
    ];
    for (const record of records) {
      const decoded = decodeBundleRecord(encodeBundleRecord(record, new KeyHistory(), false), 1, new KeyHistory());
      expect(decoded.ok && decoded.record.observation).toEqual(record.observation);
    }
    const bad = decodeBundleRecord(
      '{"kind":"stream-sequence","ts":1,"server":"a","rank":0,"change":"lost","lost":1,"filled":0}',
      7,
      new KeyHistory(),
    );
    expect(bad.ok ? null : bad.issue.message).toBe('line 7: $.change: unknown stream change lost');
  });

  it("round-trips a worker's configured KV capacity (server-info from kv_capacity_blocks), and a server-info without it", () => {
    const history = new KeyHistory(64);
    for (const observation of [
      { kind: 'server-info', ts: 5, server: 'ctx0', hashAlgo: null, tokensPerBlock: null, kvCapacityBlocks: 65_536 },
      { kind: 'server-info', ts: 6, server: 'ctx1', hashAlgo: 'v1_block_key', tokensPerBlock: 128 },
    ] as const) {
      const decoded = decodeBundleRecord(encodeBundleRecord({ observation, digest: null }, history, false), 1, history);
      if (!decoded.ok) throw new Error(decoded.issue.message);
      expect(decoded.record.observation).toEqual(observation);
    }
  });

  it('keeps u64 hashes above 2^53 exact', () => {
    const line = encodeBundleRecord(
      {
        observation: {
          kind: 'worker-events',
          ts: 1,
          server: 'ctx0',
          firstSeq: 0,
          events: [
            {
              eventId: 2,
              data: { type: 'removed', blockHashes: [6875034662206558884n, 18446744073709551615n] },
              windowSize: 4096,
              attentionDpRank: null,
              hashAlgo: null,
              layerGroupId: null,
            },
          ],
        },
        digest: null,
      },
      new KeyHistory(),
      false,
    );
    expect(line).toContain('"6875034662206558884"');
    const decoded = decodeBundleRecord(line, 1, new KeyHistory());
    expect(
      decoded.ok && decoded.record.observation.kind === 'worker-events' && decoded.record.observation.events[0]!.data,
    ).toEqual({ type: 'removed', blockHashes: [6875034662206558884n, 18446744073709551615n] });
  });

  it('decodes decimal hashes exactly at every length and keeps lower-case 64-hex keys', () => {
    const values = ['0', '7', '999999999999999', '1000000000000000', '9007199254740993', '18446744073709551615'];
    const hex = 'ab'.repeat(32);
    const line = JSON.stringify({
      kind: 'worker-events',
      ts: 1,
      server: 'a',
      firstSeq: 0,
      events: [{ eventId: 0, data: { type: 'removed', blockHashes: [...values, hex] } }],
    });
    const decoded = decodeBundleRecord(line, 1, new KeyHistory());
    expect(
      decoded.ok && decoded.record.observation.kind === 'worker-events' && decoded.record.observation.events[0]!.data,
    ).toEqual({
      type: 'removed',
      blockHashes: [...values.map((v) => BigInt(v)), hex],
    });
  });

  it.each([
    ['not json', '{"kind":', 'line 7: not JSON'],
    ['unknown kind', '{"kind":"gossip","ts":1}', 'line 7: $.kind: unknown observation kind gossip'],
    [
      'bad hash',
      '{"kind":"worker-events","ts":1,"server":"a","firstSeq":0,"events":[{"eventId":0,"data":{"type":"removed","blockHashes":["12x"]}}]}',
      'line 7: $.events[0].data.blockHashes[0]: expected a block hash',
    ],
    [
      'upper-case hex hash',
      `{"kind":"worker-events","ts":1,"server":"a","firstSeq":0,"events":[{"eventId":0,"data":{"type":"stored","parentHash":null,"blocks":[{"blockHash":"${'AB'.repeat(32)}","cacheLevel":0,"priority":null}]}}]}`,
      'line 7: $.events[0].data.blocks[0].blockHash: expected a block hash',
    ],
    [
      '21-digit hash',
      '{"kind":"worker-events","ts":1,"server":"a","firstSeq":0,"events":[{"eventId":0,"data":{"type":"removed","blockHashes":["1","000000000000000000001"]}}]}',
      'line 7: $.events[0].data.blockHashes[1]: expected a block hash',
    ],
    [
      'unknown check code',
      '{"kind":"worker-events","ts":1,"server":"a","firstSeq":0,"events":[{"eventId":0,"data":{"type":"removed","blockHashes":[]}}],"digest":{"stored":[{"checks":"m😀q","alt":null}]}}',
      'line 7: $.digest.stored[0].checks[1]: unknown check code 😀',
    ],
    [
      'hash beyond u64',
      '{"kind":"worker-events","ts":1,"server":"a","firstSeq":0,"events":[{"eventId":0,"data":{"type":"removed","blockHashes":["18446744073709551616"]}}]}',
      'expected a block hash',
    ],
    ['missing server', '{"kind":"outcome","ts":1,"requestId":"r"}', 'line 7: $.server: expected a string'],
    [
      'dangling prefix reference',
      '{"kind":"decision","ts":1,"requestId":"r","correlationId":"t","server":"a","promptTokens":null,"promptTokenCount":3,"inflight":null,"digest":{"keys":{"hashedTokens":2,"tpb":4,"router":{"v1_block_key":{"p":3,"t":""}},"worker":{}}}}',
      'refers to keys of an earlier turn',
    ],
  ])('reports %s with line and path, without throwing', (_name, line, message) => {
    const decoded = decodeBundleRecord(line, 7, new KeyHistory());
    expect(decoded.ok).toBe(false);
    if (!decoded.ok) expect(decoded.issue.message).toContain(message);
  });
  it("keeps the router's kind (type, where it reads events) and names a bad one", () => {
    const observation = {
      kind: 'router-config' as const,
      ts: 5,
      source: 'config' as const,
      routerType: 'conversation',
      tokensPerBlock: null,
      maxBatchSize: null,
      backfillBlockHashesOnFinish: null,
      servers: ['ctx0'],
      readsEvents: 'none' as const,
    };
    const line = encodeBundleRecord({ observation, digest: null }, new KeyHistory(4), false);
    const decoded = decodeBundleRecord(line, 1, new KeyHistory(4));
    expect(decoded.ok && decoded.record.observation).toEqual(observation);
    const bad = decodeBundleRecord(line.replace('"none"', '"zmq"'), 7, new KeyHistory(4));
    expect(bad.ok ? null : bad.issue.message).toMatch(/line 7.*readsEvents.*pull, stream, none/);
  });
});
