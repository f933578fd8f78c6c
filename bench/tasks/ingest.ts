// Child task: ingest recorded `/kv_cache_events` responses from their bytes, timed per pass over all files.
import { readFileSync } from 'node:fs';
import { RouterReplicaTable, WorkerTruthTable } from '../../src/core/tables/index.js';
import { splitJsonArrayBytes } from '../../src/core/relay/split-json-array.js';
import { parseKvEvents } from '../../src/core/wire/parse-kv-events.js';

export type IngestMode = 'json-parse' | 'parse' | 'parse-replica' | 'parse-truth-replica' | 'relay-replica';

export interface IngestParams {
  readonly mode: IngestMode;
  readonly files: readonly string[];
  readonly passes: number;
  readonly warmupPasses: number;
}

export interface IngestResult {
  readonly bytes: number;
  readonly events: number;
  readonly seconds: number[];
  /** CPU time of the process per pass (user + system, all threads: GC helpers count) */
  readonly cpuSeconds: number[];
  /** blocks in the router replica after the last pass (cross-checked against the Python set) */
  readonly replicaBlocks: number | null;
}

const SERVER = 'ctx0';

export function runIngest(params: IngestParams): IngestResult {
  const buffers = params.files.map((f) => readFileSync(f));
  const bytes = buffers.reduce((n, b) => n + b.length, 0);
  let events = 0;
  let replicaBlocks: number | null = null;
  const pass = (): void => {
    events = 0;
    if (params.mode === 'json-parse') {
      for (const buf of buffers) events += (JSON.parse(buf.toString('utf8')) as unknown[]).length;
      return;
    }
    const replica = params.mode === 'parse' ? null : new RouterReplicaTable();
    const truth = params.mode === 'parse-truth-replica' ? new WorkerTruthTable() : null;
    for (const buf of buffers) {
      // the relay's drain: the items' bytes copied out for forwarding, then the same bytes parsed
      if (params.mode === 'relay-replica' && !splitJsonArrayBytes(buf).ok) throw new Error('payload did not split');
      const parsed = parseKvEvents(buf);
      if (parsed.issues.length > 0)
        throw new Error(`payload did not parse cleanly: ${JSON.stringify(parsed.issues[0])}`);
      events += parsed.events.length;
      if (replica !== null) for (const p of parsed.events) replica.apply(SERVER, p.event);
      if (truth !== null) for (const p of parsed.events) truth.apply(SERVER, p.event);
    }
    replicaBlocks = replica === null ? null : replica.blockCount(SERVER);
  };
  // One forced GC before the warm-up, none between passes: a forced full GC collects the maps of the parser's
  // short-lived objects (the scanner's, the events'), which deoptimizes every function compiled against them
  // (`--trace-deopt-verbose`: "marking dependent code … reason: weak objects"), so each pass after one measured a
  // recompile on a background thread and a run in the lower tiers: nothing the daemon does between two drains.
  // Every mode pays its own garbage's collection inside its passes instead.
  (globalThis as { gc?: () => void }).gc?.();
  for (let i = 0; i < params.warmupPasses; i++) pass();
  const seconds: number[] = [];
  const cpuSeconds: number[] = [];
  for (let i = 0; i < params.passes; i++) {
    const cpu = process.cpuUsage();
    const start = performance.now();
    pass();
    seconds.push((performance.now() - start) / 1000);
    const used = process.cpuUsage(cpu);
    cpuSeconds.push((used.user + used.system) / 1e6);
  }
  return { bytes, events, seconds, cpuSeconds, replicaBlocks };
}
