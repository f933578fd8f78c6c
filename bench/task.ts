// Entry point of every measured child process: `node --expose-gc build/bench/task.js NAME PARAMS_JSON`.
// Prints one JSON result line. Task modules are imported on demand, so a child loads only what it measures.

const tasks: Record<string, () => Promise<(params: never) => unknown>> = {
  hash: async () => (await import('./tasks/hash.js')).runHash,
  ingest: async () => (await import('./tasks/ingest.js')).runIngest,
  memory: async () => (await import('./tasks/memory.js')).runMemory,
  load: async () => (await import('./tasks/load.js')).runLoad,
  'open-load': async () => (await import('./tasks/open-load.js')).runOpenLoad,
  'sim-worker': async () => (await import('./tasks/sim-worker.js')).runSimWorker,
  'node-proxy': async () => (await import('./tasks/node-proxy.js')).runNodeProxy,
  'bundle-gen': async () => (await import('./tasks/bundle-gen.js')).runBundleGen,
  'jsonl-read': async () => (await import('./tasks/jsonl-read.js')).runJsonlRead,
  render: async () => (await import('./tasks/render.js')).runRender,
  'scan-cost': async () => (await import('./tasks/scan-cost.js')).runScanCost,
  fleet: async () => (await import('./tasks/fleet.js')).runFleet,
  'zmq-subscriber': async () => (await import('./tasks/zmq-subscriber.js')).runZmqSubscriber,
};

async function main(): Promise<void> {
  const [name, paramsJson] = process.argv.slice(2);
  const load = name === undefined ? undefined : tasks[name];
  if (load === undefined)
    throw new Error(`unknown bench task ${String(name)}; known: ${Object.keys(tasks).join(', ')}`);
  const task = (await load()) as (params: unknown) => unknown;
  const result = await task(JSON.parse(paramsJson ?? '{}'));
  const usage = process.resourceUsage();
  process.stdout.write(`${JSON.stringify({ ...(result as object), taskMaxRssBytes: usage.maxRSS * 1024 })}\n`);
  // a task whose sockets or timers outlive it still ends (and writes its --cpu-prof profile on the way out)
  setTimeout(() => process.exit(0), 1_000).unref();
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
