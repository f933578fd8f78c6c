// Quick throughput check of the hot `/kv_cache_events` parser against V8's JSON.parse on the same bytes.
// A measurement, not a test. Run (until `npm run bench` picks it up):
//   npx tsc -p tsconfig.json --noEmit false --outDir .bench-build && node --expose-gc .bench-build/bench/parse-kv-events.js
import { parseKvEvents } from '../src/core/wire/parse-kv-events.js';
import { serializeKvEvents } from '../src/core/wire/serialize-kv-events.js';
import type { KvEvent, StoredBlock } from '../src/core/wire/kv-event.js';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s;
  };
}

function payload(storedEvents: number, tokensPerEvent: number, tokensPerBlock: number, removedPerStored = 0.25, hashesPerRemoved = 8): string {
  const next = rng(42);
  const hash = (): bigint => (BigInt(next()) << 32n) | BigInt(next());
  const events: KvEvent[] = [];
  let id = 0;
  for (let e = 0; e < storedEvents; e++) {
    const blocks: StoredBlock[] = [];
    for (let b = 0; b < tokensPerEvent / tokensPerBlock; b++) {
      const tokens = new Uint32Array(tokensPerBlock);
      for (let t = 0; t < tokensPerBlock; t++) tokens[t] = next() % 152_000;
      blocks.push({ blockHash: hash(), tokens, tokenExtraIds: null, cacheLevel: 0, priority: 35, mmKeys: [], cacheSalt: null, loraId: null });
    }
    events.push({ eventId: id++, data: { type: 'stored', parentHash: e % 3 === 0 ? null : hash(), blocks }, windowSize: 4096, attentionDpRank: 0, hashAlgo: null, layerGroupId: null });
    for (let r = removedPerStored; r > 0 && (r >= 1 || e % Math.round(1 / r) === 0); r--) {
      events.push({ eventId: id++, data: { type: 'removed', blockHashes: Array.from({ length: hashesPerRemoved }, hash) }, windowSize: 4096, attentionDpRank: 0, hashAlgo: null, layerGroupId: null });
    }
  }
  return serializeKvEvents(events);
}

function stats(samples: number[]): { median: number; min: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)] ?? Number.NaN, min: sorted[0] ?? Number.NaN };
}

/** Runs both alternately (the machine is shared, so load spikes hit both alike) and reports min and median. */
function compare(runs: number, base: () => unknown, ours: () => unknown): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let k = 0; k < 5; k++) {
    base();
    ours();
  }
  const a: number[] = [];
  const b: number[] = [];
  for (let k = 0; k < runs; k++) {
    for (const [fn, out] of [[base, a], [ours, b]] as const) {
      gc?.();
      const t0 = performance.now();
      fn();
      out.push(performance.now() - t0);
    }
  }
  const sa = stats(a);
  const sb = stats(b);
  console.log(`JSON.parse     median ${sa.median.toFixed(1)} ms  min ${sa.min.toFixed(1)} ms`);
  console.log(`parseKvEvents  median ${sb.median.toFixed(1)} ms  min ${sb.min.toFixed(1)} ms`);
  console.log(`speed vs JSON.parse: ${(sa.median / sb.median).toFixed(2)}x (median), ${(sa.min / sb.min).toFixed(2)}x (min)`);
}

const scenarios: [string, () => string][] = [
  ['1000 stored x 128 tokens (tpb 32) + 250 removed x 8', () => payload(1000, 128, 32)],
  ['1000 stored x 128 tokens (tpb 128) + 250 removed x 8', () => payload(1000, 128, 128)],
  ['eviction storm: 200 stored x 128 (tpb 32) + 4000 removed x 32', () => payload(200, 128, 32, 20, 32)],
];
for (const [name, make] of scenarios) {
  // as the daemon sees it: decoded from the response bytes (a flat string, not a concatenation rope)
  const text = Buffer.from(make(), 'utf8').toString('utf8');
  const parsed = parseKvEvents(text);
  if (parsed.issues.length > 0) throw new Error(JSON.stringify(parsed.issues[0]));
  console.log(`${name}: ${(text.length / 1e6).toFixed(2)} MB, ${parsed.events.length} events`);
  compare(21, () => JSON.parse(text) as unknown, () => parseKvEvents(text));
}
