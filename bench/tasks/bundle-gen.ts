// Child task: writes a recorded bundle of a relay-mode deployment through the project's BundleWriter (the code
// `kvsentinel record` uses): multi-turn agentic trajectories sticky to 8 CTX servers with 8 attention-DP ranks,
// growing prompts, `stored` events of 128-token blocks with real v1_block_key hashes, `removed` when a rank's
// pool is full, router polls and outcomes. The writer is loaded from the build at run time, so this task reports
// a clear error instead of failing to compile when the bundle writer is not in this build.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { hashV1Block } from '../../src/core/hashing/index.js';
import type { Observation } from '../../src/core/observe/observation.js';
import type { KvEvent, StoredBlock } from '../../src/core/wire/kv-event.js';
import { srcBuildDir } from '../lib/paths.js';

export interface BundleGenParams {
  readonly dir: string;
  readonly requests: number;
  readonly turnsPerTrajectory: number;
  /** new 128-token blocks each turn adds to its trajectory's prompt (one `stored` event each) */
  readonly blocksPerTurn: number;
  readonly servers: number;
  readonly ranks: number;
  /** blocks a rank holds before evicting */
  readonly blocksPerRank: number;
}

export interface BundleGenResult {
  readonly requests: number;
  readonly events: number;
  readonly observations: number;
  readonly promptTokens: number;
  readonly seconds: number;
}

interface BundleWriterLike {
  write(obs: Observation): void;
  drain(): Promise<void>;
  close(): Promise<unknown>;
}

interface BundleWriterModule {
  readonly BundleWriter: {
    create(dir: string, options: { mode: 'relay'; meta?: Record<string, string> }): Promise<BundleWriterLike>;
  };
}

export const BUNDLE_WRITER_MODULE = join(srcBuildDir, 'outputs/bundle-writer.js');

export function bundleWriterAvailable(): boolean {
  return existsSync(BUNDLE_WRITER_MODULE);
}

const TPB = 128;

export async function runBundleGen(params: BundleGenParams): Promise<BundleGenResult> {
  const started = performance.now();
  const mod = (await import(pathToFileURL(BUNDLE_WRITER_MODULE).href)) as BundleWriterModule;
  const writer = await mod.BundleWriter.create(params.dir, {
    mode: 'relay',
    meta: { source: 'kvsentinel bench (bench/tasks/bundle-gen.ts)' },
  });
  const servers = Array.from({ length: params.servers }, (_, i) => `ctx${i}`);
  let ts = 1_780_000_000_000;
  writer.write({
    kind: 'router-config',
    ts,
    source: 'config',
    routerType: 'kv_cache_aware',
    tokensPerBlock: TPB,
    maxBatchSize: 64,
    backfillBlockHashesOnFinish: false,
    servers,
  });
  for (const server of servers)
    writer.write({ kind: 'server-info', ts, server, hashAlgo: 'v1_block_key', tokensPerBlock: TPB });
  let rng = 0x2545f491;
  const next = (): number => {
    rng = (Math.imul(rng, 1664525) + 1013904223) >>> 0;
    return rng;
  };
  const relaySeq = new Map<string, number>(servers.map((s) => [s, 0]));
  const eventIds = new Map<string, number>();
  const resident = new Map<string, { order: bigint[]; held: Set<bigint> }>();
  // 4 shared system prompts of 16 blocks, as agentic deployments have
  const systemPrompts = Array.from({ length: 4 }, () => Uint32Array.from({ length: 16 * TPB }, () => next() % 152_064));
  const systemPromptHashes = systemPrompts.map((p) => {
    const hashes: bigint[] = [];
    let parent = 0n;
    for (let b = 0; b < 16; b++) hashes.push((parent = hashV1Block(p.subarray(b * TPB, (b + 1) * TPB), parent)));
    return hashes;
  });
  const concurrentTrajectories = 384;
  interface Trajectory {
    readonly id: string;
    readonly server: string;
    readonly rank: number;
    readonly tokens: Uint32Array;
    readonly systemHashes: readonly bigint[];
    length: number;
    lastHash: bigint;
    turn: number;
  }
  let trajectoryCounter = 0;
  const newTrajectory = (): Trajectory => {
    const id = `traj-${trajectoryCounter++}`;
    const capacity = (16 + params.turnsPerTrajectory * params.blocksPerTurn) * TPB + 1;
    const tokens = new Uint32Array(capacity);
    const system = trajectoryCounter % systemPrompts.length;
    tokens.set(systemPrompts[system]!);
    const systemHashes = systemPromptHashes[system]!;
    return {
      id,
      server: servers[trajectoryCounter % servers.length]!,
      rank: (trajectoryCounter >>> 3) % params.ranks,
      tokens,
      systemHashes,
      length: 16 * TPB,
      lastHash: systemHashes[15]!,
      turn: 0,
    };
  };
  const active: Trajectory[] = Array.from({ length: concurrentTrajectories }, newTrajectory);
  let events = 0;
  let promptTokens = 0;
  for (let r = 0; r < params.requests; r++) {
    const slot = next() % active.length;
    let t = active[slot]!;
    if (t.turn >= params.turnsPerTrajectory) {
      t = newTrajectory();
      active[slot] = t;
    }
    ts += 7;
    const cached = t.length;
    // the turn adds tool output and the user's next message
    for (let i = 0; i < params.blocksPerTurn * TPB; i++) t.tokens[t.length + i] = next() % 152_064;
    const stored: KvEvent[] = [];
    const streamKey = `${t.server}/${t.rank}`;
    let pool = resident.get(streamKey);
    if (pool === undefined) {
      pool = { order: [], held: new Set() };
      resident.set(streamKey, pool);
    }
    let eventId = eventIds.get(streamKey) ?? 0;
    const store = (parent: bigint, blockTokens: Uint32Array, blockHash: bigint): void => {
      const block: StoredBlock = {
        blockHash,
        tokens: blockTokens,
        tokenExtraIds: null,
        cacheLevel: 0,
        priority: 35,
        mmKeys: [],
        cacheSalt: null,
        loraId: null,
      };
      stored.push({
        eventId: eventId++,
        data: { type: 'stored', parentHash: parent === 0n ? null : parent, blocks: [block] },
        windowSize: 4096,
        attentionDpRank: t.rank,
        hashAlgo: null,
        layerGroupId: null,
      });
      pool.order.push(blockHash);
      pool.held.add(blockHash);
      if (pool.order.length > params.blocksPerRank) {
        const evicted = pool.order.shift()!;
        pool.held.delete(evicted);
        stored.push({
          eventId: eventId++,
          data: { type: 'removed', blockHashes: [evicted] },
          windowSize: 4096,
          attentionDpRank: t.rank,
          hashAlgo: null,
          layerGroupId: null,
        });
      }
    };
    if (t.turn === 0) {
      // the shared system prompt is stored once per rank (and again after eviction)
      let parent = 0n;
      for (let b = 0; b < 16; b++) {
        const blockHash = t.systemHashes[b]!;
        if (!pool.held.has(blockHash)) store(parent, t.tokens.slice(b * TPB, (b + 1) * TPB), blockHash);
        parent = blockHash;
      }
    }
    for (let b = 0; b < params.blocksPerTurn; b++) {
      const start = t.length + b * TPB;
      const blockTokens = t.tokens.slice(start, start + TPB);
      const parent = t.lastHash;
      const blockHash = hashV1Block(blockTokens, parent);
      t.lastHash = blockHash;
      store(parent, blockTokens, blockHash);
    }
    eventIds.set(streamKey, eventId);
    t.length += params.blocksPerTurn * TPB;
    t.turn++;
    const requestId = `req-${r}`;
    const prompt = t.tokens.subarray(0, t.length);
    promptTokens += prompt.length;
    writer.write({
      kind: 'decision',
      ts,
      requestId,
      correlationId: t.id,
      server: t.server,
      promptTokens: prompt,
      promptTokenCount: prompt.length,
      inflight: null,
    });
    const firstSeq = relaySeq.get(t.server)!;
    writer.write({ kind: 'worker-events', ts: ts + 3, server: t.server, firstSeq, events: stored });
    relaySeq.set(t.server, firstSeq + stored.length);
    events += stored.length;
    writer.write({
      kind: 'router-poll',
      ts: ts + 4,
      server: t.server,
      consumer: 'router',
      fromSeq: firstSeq,
      toSeq: firstSeq + stored.length,
      dropped: 0,
    });
    writer.write({
      kind: 'outcome',
      ts: ts + 5,
      requestId,
      server: t.server,
      ok: true,
      promptTokens: prompt.length,
      cachedTokens: cached,
      latencyMs: 40 + (next() % 60),
    });
    if (r % 256 === 0) await writer.drain();
  }
  await writer.close();
  return {
    requests: params.requests,
    events,
    observations: 1 + servers.length + params.requests * 4,
    promptTokens,
    seconds: (performance.now() - started) / 1000,
  };
}
