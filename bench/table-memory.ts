// Memory per block of the block tables (U64HashSet, WorkerTruthTable) against a plain JS Set<bigint>.
// A measurement, not a test. Run (until `npm run bench` picks it up):
//   npx tsc -p tsconfig.json --noEmit false --outDir .bench-build && node --expose-gc .bench-build/bench/table-memory.js [counts…]
// Counts default to 1000000 and 10000000. Each structure is built, measured and dropped before the next one.
import { pathToFileURL } from 'node:url';
import { U64HashSet, WorkerTruthTable } from '../src/core/tables/index.js';
import type { KvEvent, StoredBlock } from '../src/core/wire/kv-event.js';

export interface TableMemoryRow {
  readonly structure: string;
  readonly blocks: number;
  /** typed-array bytes per block (null for the JS Set, which has none) */
  readonly arrayBytesPerBlock: number | null;
  /** growth of heapUsed + arrayBuffers after a full GC, per block */
  readonly heapBytesPerBlock: number;
  readonly buildMs: number;
  /** mean time of one lookup (half hits, half misses), ns; null when not measured */
  readonly lookupNs: number | null;
}

function gc(): void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g === undefined) throw new Error('run node with --expose-gc');
  g();
  g();
}

function heapBytes(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** xorshift128 over 32-bit halves: well spread 64-bit keys with no BigInt allocation. */
function keyStream(seed: number): (out: Uint32Array) => void {
  let a = seed | 1;
  let b = 0x9e3779b9;
  let c = 0x243f6a88;
  let d = 0xb7e15162;
  return (out) => {
    for (let i = 0; i < 2; i++) {
      const t = a ^ (a << 11);
      a = b;
      b = c;
      c = d;
      d = (d ^ (d >>> 19) ^ (t ^ (t >>> 8))) >>> 0;
      out[i] = d;
    }
  };
}

interface Built {
  readonly keep: unknown;
  readonly arrayBytes: number | null;
  readonly lookupNs?: number;
}

function measure(structure: string, blocks: number, build: () => Built): TableMemoryRow {
  gc();
  const before = heapBytes();
  const start = performance.now();
  const built = build();
  const buildMs = performance.now() - start;
  gc();
  const after = heapBytes();
  const row: TableMemoryRow = {
    structure,
    blocks,
    arrayBytesPerBlock: built.arrayBytes === null ? null : built.arrayBytes / blocks,
    heapBytesPerBlock: (after - before) / blocks,
    buildMs,
    lookupNs: built.lookupNs ?? null,
  };
  // keep the structure alive until after the second measurement
  if (built.keep === undefined) throw new Error('nothing built');
  return row;
}

/** Replays the first keys of the build stream (hits) interleaved with keys of another stream (misses). */
function lookupNs(set: U64HashSet, blocks: number): number {
  const lookups = Math.min(blocks, 1_000_000);
  const hits = keyStream(blocks);
  const misses = keyStream(blocks ^ 0x5bd1e995);
  const keys = new Uint32Array(lookups * 2);
  const halves = new Uint32Array(2);
  for (let i = 0; i < lookups; i++) {
    (i % 2 === 0 ? hits : misses)(halves);
    keys[2 * i] = halves[0]!;
    keys[2 * i + 1] = halves[1]!;
  }
  let found = 0;
  const start = performance.now();
  for (let i = 0; i < lookups; i++) if (set.hasHalves(keys[2 * i]!, keys[2 * i + 1]!)) found++;
  const ns = ((performance.now() - start) * 1e6) / lookups;
  if (found < Math.floor(lookups / 2) || found > lookups / 2 + 10) {
    throw new Error(`lookup check failed: ${found} of ${lookups} found`);
  }
  return ns;
}

function hashSetRow(blocks: number, presized: boolean): TableMemoryRow {
  return measure(presized ? 'U64HashSet (presized)' : 'U64HashSet', blocks, () => {
    const set = new U64HashSet(presized ? blocks : 0);
    const next = keyStream(blocks);
    const halves = new Uint32Array(2);
    while (set.size < blocks) {
      next(halves);
      set.addHalves(halves[0]!, halves[1]!, halves[0]! & 1);
    }
    return { keep: set, arrayBytes: set.byteLength, lookupNs: lookupNs(set, blocks) };
  });
}

function jsSetRow(blocks: number): TableMemoryRow {
  return measure('Set<bigint>', blocks, () => {
    const set = new Set<bigint>();
    const next = keyStream(blocks);
    const halves = new Uint32Array(2);
    while (set.size < blocks) {
      next(halves);
      set.add((BigInt(halves[0]!) << 32n) | BigInt(halves[1]!));
    }
    return { keep: set, arrayBytes: null };
  });
}

function truthTableRow(blocks: number): TableMemoryRow {
  return measure('WorkerTruthTable (stored events of 32 blocks)', blocks, () => {
    const table = new WorkerTruthTable();
    const next = keyStream(blocks);
    const halves = new Uint32Array(2);
    const tokens = new Uint32Array(0);
    let stored = 0;
    while (stored < blocks) {
      const batch: StoredBlock[] = [];
      for (let i = 0; i < 32 && stored + batch.length < blocks; i++) {
        next(halves);
        const blockHash = (BigInt(halves[0]!) << 32n) | BigInt(halves[1]!);
        const block: StoredBlock = {
          blockHash,
          tokens,
          tokenExtraIds: null,
          cacheLevel: 0,
          priority: 35,
          mmKeys: [],
          cacheSalt: null,
          loraId: null,
        };
        batch.push(block);
      }
      const event: KvEvent = {
        eventId: null,
        data: { type: 'stored', parentHash: null, blocks: batch },
        windowSize: 4096,
        attentionDpRank: 0,
        hashAlgo: null,
        layerGroupId: null,
      };
      stored += table.apply('ctx', event).added;
      if (batch.length === 0) break;
    }
    return { keep: table, arrayBytes: table.byteLength };
  });
}

export function runTableMemory(blockCounts: readonly number[]): TableMemoryRow[] {
  const rows: TableMemoryRow[] = [];
  for (const blocks of blockCounts) {
    rows.push(hashSetRow(blocks, false), hashSetRow(blocks, true), truthTableRow(blocks), jsSetRow(blocks));
  }
  return rows;
}

function format(rows: readonly TableMemoryRow[]): string {
  const header = [
    'structure'.padEnd(46),
    'blocks'.padStart(10),
    'array B/block'.padStart(14),
    'heap B/block'.padStart(13),
    'build ms'.padStart(9),
    'lookup ns'.padStart(10),
  ];
  const lines = [header.join(' ')];
  for (const r of rows) {
    lines.push(
      [
        r.structure.padEnd(46),
        String(r.blocks).padStart(10),
        (r.arrayBytesPerBlock === null ? '-' : r.arrayBytesPerBlock.toFixed(1)).padStart(14),
        r.heapBytesPerBlock.toFixed(1).padStart(13),
        r.buildMs.toFixed(0).padStart(9),
        (r.lookupNs === null ? '-' : r.lookupNs.toFixed(0)).padStart(10),
      ].join(' '),
    );
  }
  return lines.join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const counts = process.argv.slice(2).map(Number);
  console.log(format(runTableMemory(counts.length > 0 ? counts : [1_000_000, 10_000_000])));
}
