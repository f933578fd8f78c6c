// A deliberately tiny cluster for state unit tests (the real simulator lives in src/sim): three servers with
// real v1 block hashes, tiny blocks, a few trajectories; the router either follows prefixes (sticky) or ignores
// them (random). It emits the observations a relay would, so tests can check the joins number by number.
import { wireHashChain } from '../../src/core/hashing/block-key.js';
import type { Observation } from '../../src/core/observe/observation.js';
import type { KvEvent } from '../../src/core/wire/kv-event.js';

export interface MiniOptions {
  readonly servers?: number;
  readonly blockSize?: number;
  readonly routerTokensPerBlock?: number;
  readonly trajectories?: number;
  readonly turns?: number;
  readonly routing?: 'sticky' | 'random';
  /** workers emit events */
  readonly events?: boolean;
  /** skip this many event ids after every stored event (a competing consumer) */
  readonly stolenEvery?: number;
  /** the router polls the relay after each finish */
  readonly routerPolls?: boolean;
  readonly routerType?: string;
  readonly seed?: number;
  /** the router's prompt differs from the worker's in token 0 */
  readonly drift?: boolean;
}

export function miniCluster(options: MiniOptions = {}): Observation[] {
  const n = options.servers ?? 3;
  const bs = options.blockSize ?? 4;
  const tpb = options.routerTokensPerBlock ?? bs;
  const servers = Array.from({ length: n }, (_, i) => `ctx${i}`);
  const held = servers.map(() => new Set<bigint>());
  const eventIds = servers.map(() => 0);
  const relaySeq = servers.map(() => 0);
  let seed = options.seed ?? 7;
  const random = (): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
  const out: Observation[] = [];
  let ts = 0;
  out.push({ kind: 'router-config', ts, source: 'simulator', routerType: options.routerType ?? 'kv_cache_aware', tokensPerBlock: tpb, maxBatchSize: 64, backfillBlockHashesOnFinish: false, servers });
  for (const server of servers) out.push({ kind: 'server-info', ts, server, hashAlgo: 'v1_block_key', tokensPerBlock: bs });
  const system = [11, 12, 13, 14, 15, 16, 17, 18];
  const last = new Map<number, number>();
  let request = 0;
  for (let turn = 0; turn < (options.turns ?? 6); turn++) {
    for (let t = 0; t < (options.trajectories ?? 40); t++) {
      ts += 100;
      const prompt = Uint32Array.from([...system, ...Array.from({ length: 6 * (turn + 1) }, (_, i) => 1000 * (t + 1) + i)]);
      const previous = last.get(t);
      const chosen =
        options.routing === 'random' || previous === undefined ? Math.floor(random() * n) : previous;
      last.set(t, chosen);
      const server = servers[chosen]!;
      const requestId = `r${request++}`;
      const routerPrompt = options.drift === true ? Uint32Array.from(prompt, (x, i) => (i === 0 ? x + 1 : x)) : prompt;
      out.push({ kind: 'decision', ts, requestId, correlationId: `traj${t}`, server, promptTokens: routerPrompt, promptTokenCount: prompt.length, inflight: Object.fromEntries(servers.map((s) => [s, 1])) });
      const keys = wireHashChain(prompt.subarray(0, prompt.length - 1), bs, 'v1_block_key') as bigint[];
      let cachedBlocks = 0;
      while (cachedBlocks < keys.length && held[chosen]!.has(keys[cachedBlocks]!)) cachedBlocks++;
      const cached = Math.min(cachedBlocks * bs, prompt.length - 1);
      out.push({ kind: 'outcome', ts: ts + 50, requestId, server, ok: true, promptTokens: prompt.length, cachedTokens: cached, latencyMs: 50 });
      // the worker stores every block of the prompt (partial tail included)
      const storedKeys = wireHashChain(prompt, bs, 'v1_block_key') as bigint[];
      const fresh = storedKeys.map((k, i) => ({ k, i })).filter(({ k }) => !held[chosen]!.has(k));
      for (const k of storedKeys) held[chosen]!.add(k);
      const events: KvEvent[] = [];
      if (options.events !== false && fresh.length > 0) {
        const first = fresh[0]!.i;
        events.push({
          eventId: eventIds[chosen]!,
          data: {
            type: 'stored',
            parentHash: first === 0 ? null : storedKeys[first - 1]!,
            blocks: storedKeys.slice(first).map((k, j) => ({
              blockHash: k,
              tokens: prompt.slice((first + j) * bs, Math.min((first + j + 1) * bs, prompt.length)),
              tokenExtraIds: null,
              cacheLevel: 0,
              priority: 35,
              mmKeys: [],
              cacheSalt: null,
              loraId: null,
            })),
          },
          windowSize: 4096,
          attentionDpRank: null,
          hashAlgo: null,
          layerGroupId: null,
        });
        eventIds[chosen]! += 1 + (options.stolenEvery !== undefined && request % options.stolenEvery === 0 ? 2 : 0);
      }
      const from = relaySeq[chosen]!;
      if (events.length > 0) {
        out.push({ kind: 'worker-events', ts: ts + 55, server, firstSeq: from, events });
        relaySeq[chosen]! += events.length;
      }
      if (options.routerPolls !== false) {
        out.push({ kind: 'router-poll', ts: ts + 56, server, consumer: 'router', fromSeq: from, toSeq: relaySeq[chosen]!, dropped: 0 });
      }
    }
  }
  return out;
}
