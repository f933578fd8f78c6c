// Entry point of every measured child process: `node --expose-gc build/bench/task.js NAME PARAMS_JSON`.
// Prints one JSON result line.
import { runHash, type HashParams } from './tasks/hash.js';
import { runIngest, type IngestParams } from './tasks/ingest.js';
import { runMemory, type MemoryParams } from './tasks/memory.js';
import { runLoad, type LoadParams } from './tasks/load.js';
import { runSimWorker, type SimWorkerParams } from './tasks/sim-worker.js';
import { runBundleGen, type BundleGenParams } from './tasks/bundle-gen.js';
import { runJsonlRead, type JsonlReadParams } from './tasks/jsonl-read.js';

const tasks: Record<string, (params: never) => unknown> = {
  hash: (p: HashParams) => runHash(p),
  ingest: (p: IngestParams) => runIngest(p),
  memory: (p: MemoryParams) => runMemory(p),
  load: (p: LoadParams) => runLoad(p),
  'sim-worker': (p: SimWorkerParams) => runSimWorker(p),
  'bundle-gen': (p: BundleGenParams) => runBundleGen(p),
  'jsonl-read': (p: JsonlReadParams) => runJsonlRead(p),
};

async function main(): Promise<void> {
  const [name, paramsJson] = process.argv.slice(2);
  const task = name === undefined ? undefined : tasks[name];
  if (task === undefined) throw new Error(`unknown bench task ${String(name)}; known: ${Object.keys(tasks).join(', ')}`);
  const result = await (task as (params: unknown) => unknown)(JSON.parse(paramsJson ?? '{}'));
  const usage = process.resourceUsage();
  process.stdout.write(`${JSON.stringify({ ...(result as object), taskMaxRssBytes: usage.maxRSS * 1024 })}\n`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
