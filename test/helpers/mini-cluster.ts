// A deliberately tiny cluster for state unit tests (the real simulator lives in src/sim): three servers with
// real v1 block hashes, tiny blocks, a few trajectories; the router either follows prefixes (sticky) or ignores
// them (random). It emits the observations a relay would, so tests can check the joins number by number.
import { wireHashChain } from '../../src/core/hashing/block-key.js';
import type { Observation } from '../../src/core/observe/observation.js';
import { compareRenders } from '../../src/core/render/compare-renders.js';
import type { KvEvent } from '../../src/core/wire/kv-event.js';

export interface MiniOptions {
  readonly servers?: number;
  readonly blockSize?: number;
  readonly routerTokensPerBlock?: number;
  readonly trajectories?: number;
  readonly turns?: number;
  /**
   * sticky: back to the previous turn's server; random; prefix: the server whose router table (the keys of the
   * events the router received, looked up with the router's tokens_per_block) scores best, TensorRT-LLM's score:
   * matched / prompt blocks − active / max_batch_size (active = trajectories placed on the server, max_batch_size
   * = trajectories per server), ties at
   * random — a working KV-cache-aware router
   */
  readonly routing?: 'sticky' | 'random' | 'prefix';
  /** false: no source states the router's settings (relay without debug endpoint or orchestrator log) */
  readonly routerSettings?: boolean;
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
  /**
   * 'chat': requests carry chat messages (no ids); the CTX responses carry the worker's prompt_token_ids.
   * 'rendered': chat requests kvsentinel renders with the model's tokenizer (decisions carry the router-side ids),
   * the responses carry the worker's ids, and each request's render-check follows its outcome's ids
   */
  readonly promptForm?: 'token-ids' | 'chat' | 'rendered';
  /** the router's render repeats the worker's first id (a doubled BOS) */
  readonly doubledBos?: boolean;
}

export function miniCluster(options: MiniOptions = {}): Observation[] {
  const n = options.servers ?? 3;
  const bs = options.blockSize ?? 4;
  const tpb = options.routerTokensPerBlock ?? bs;
  const prefixMaxBatch = Math.max(4, Math.ceil((options.trajectories ?? 40) / n));
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
  if (options.routerSettings === false) {
    out.push({
      kind: 'router-config',
      ts,
      source: 'config',
      routerType: null,
      tokensPerBlock: null,
      maxBatchSize: null,
      backfillBlockHashesOnFinish: null,
      servers,
    });
  } else {
    out.push({
      kind: 'router-config',
      ts,
      source: 'simulator',
      routerType: options.routerType ?? 'kv_cache_aware',
      tokensPerBlock: tpb,
      maxBatchSize: options.routing === 'prefix' ? prefixMaxBatch : 64,
      backfillBlockHashesOnFinish: false,
      servers,
    });
  }
  for (const server of servers)
    out.push({ kind: 'server-info', ts, server, hashAlgo: 'v1_block_key', tokensPerBlock: bs });
  // what the router's table holds per server: the stored keys of the events it polled
  const routerTable = servers.map(() => new Set<bigint>());
  const routerPolls = options.routerPolls !== false && options.events !== false;
  // prompts scale with the block size: a 2-block system prefix, 1.5 blocks more per turn (8 and 6 tokens at 4)
  const system = Array.from({ length: 2 * bs }, (_, i) => 11 + i);
  const growth = Math.round(1.5 * bs);
  const last = new Map<number, number>();
  const load = (server: number): number => [...last.values()].filter((s) => s === server).length;
  let request = 0;
  for (let turn = 0; turn < (options.turns ?? 6); turn++) {
    for (let t = 0; t < (options.trajectories ?? 40); t++) {
      ts += 100;
      const prompt = Uint32Array.from([
        ...system,
        ...Array.from({ length: growth * (turn + 1) }, (_, i) => 1000 * (t + 1) + i),
      ]);
      const previous = last.get(t);
      let chosen: number;
      if (options.routing === 'prefix') {
        const routerKeys = wireHashChain(prompt.subarray(0, prompt.length - 1), tpb, 'v1_block_key') as bigint[];
        const scores = routerTable.map((table, i) => {
          let m = 0;
          while (m < routerKeys.length && table.has(routerKeys[m]!)) m++;
          return m / Math.max(routerKeys.length, 1) - load(i) / prefixMaxBatch;
        });
        const best = Math.max(...scores);
        const tied = scores.map((x, i) => (x >= best - 1e-9 ? i : -1)).filter((i) => i >= 0);
        chosen = tied[Math.floor(random() * tied.length)]!;
      } else {
        chosen = options.routing === 'random' || previous === undefined ? Math.floor(random() * n) : previous;
      }
      const inflight = Object.fromEntries(servers.map((s, i) => [s, options.routing === 'prefix' ? load(i) : 1]));
      last.set(t, chosen);
      const server = servers[chosen]!;
      const requestId = `r${request++}`;
      const drifted = options.drift === true ? Uint32Array.from(prompt, (x, i) => (i === 0 ? x + 1 : x)) : prompt;
      const routerPrompt = options.doubledBos === true ? Uint32Array.from([drifted[0]!, ...drifted]) : drifted;
      const chat = options.promptForm === 'chat';
      const rendered = options.promptForm === 'rendered';
      out.push({
        kind: 'decision',
        ts,
        requestId,
        correlationId: `traj${t}`,
        server,
        promptTokens: chat ? null : routerPrompt,
        promptTokenCount: chat ? null : routerPrompt.length,
        inflight,
        ...(chat || rendered ? { promptForm: 'chat' as const } : {}),
        ...(rendered ? { promptTokensFrom: 'tokenizer' as const } : {}),
      });
      if (rendered) {
        const diff = compareRenders(routerPrompt, prompt, { bosId: null, hasTools: false, tokenText: null });
        out.push({
          kind: 'render-check',
          ts: ts + 50,
          requestId,
          server,
          routerIds: 'tokenizer',
          promptTokens: routerPrompt.length,
          diff,
        });
      }
      const keys = wireHashChain(prompt.subarray(0, prompt.length - 1), bs, 'v1_block_key') as bigint[];
      let cachedBlocks = 0;
      while (cachedBlocks < keys.length && held[chosen]!.has(keys[cachedBlocks]!)) cachedBlocks++;
      const cached = Math.min(cachedBlocks * bs, prompt.length - 1);
      out.push({
        kind: 'outcome',
        ts: ts + 50,
        requestId,
        server,
        ok: true,
        promptTokens: prompt.length,
        cachedTokens: cached,
        latencyMs: 50,
        ...(chat || rendered ? { workerPromptTokens: prompt } : {}),
      });
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
      if (routerPolls)
        for (const e of events)
          if (e.data.type === 'stored') for (const b of e.data.blocks) routerTable[chosen]!.add(b.blockHash as bigint);
      if (options.routerPolls !== false) {
        out.push({
          kind: 'router-poll',
          ts: ts + 56,
          server,
          consumer: 'router',
          fromSeq: from,
          toSeq: relaySeq[chosen]!,
          dropped: 0,
        });
      }
    }
  }
  return out;
}
