// `npm run bench [-- --quick] [-- --out FILE] [-- --only id,id]`: runs every benchmark section and writes
// BENCHMARKS.md (or FILE) from what it measured. With --only, the sections run replace theirs in the existing file
// and every other section is kept as it was.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { machineInfo } from './lib/env.js';
import { repoRoot } from './lib/paths.js';
import { renderReport, type RunConfig, type SectionReport } from './lib/report.js';
import { mergeReport } from './lib/report-merge.js';
import { hashingSection } from './sections/hashing.js';
import { ingestSection } from './sections/ingest.js';
import { memorySection } from './sections/memory.js';
import { relaySection } from './sections/relay.js';
import { auditSection } from './sections/audit.js';
import { scrapeSection } from './sections/scrape.js';
import { renderSection } from './sections/render.js';
import { simulatorSection } from './sections/simulator.js';
import { fleetSection } from './sections/fleet.js';
import { zmqSection } from './sections/zmq.js';

interface Section {
  readonly id: string;
  readonly title: string;
  readonly run: (config: RunConfig) => Promise<SectionReport>;
}

const sections: readonly Section[] = [
  { id: 'ingest', title: '1. Event ingest', run: ingestSection },
  { id: 'hashing', title: '2. v1_block_key hashing', run: hashingSection },
  { id: 'memory', title: '3. Table memory', run: memorySection },
  { id: 'relay', title: '4. Relay overhead', run: relaySection },
  { id: 'audit', title: '5. Offline audit', run: auditSection },
  { id: 'scrape', title: '6. Scrape', run: scrapeSection },
  { id: 'simulator', title: '7. Simulator', run: simulatorSection },
  { id: 'render', title: '8. Render parity', run: renderSection },
  { id: 'fleet', title: '9. Fleet size', run: fleetSection },
  { id: 'zmq', title: '10. ZMQ ingest', run: zmqSection },
];

function parseArgs(argv: readonly string[]): { quick: boolean; out: string; only: Set<string> | null } {
  let quick = false;
  let out = resolve(repoRoot, 'BENCHMARKS.md');
  let only: Set<string> | null = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--quick') quick = true;
    else if (a === '--out') out = resolve(process.cwd(), argv[++i] ?? '');
    else if (a === '--only') only = new Set((argv[++i] ?? '').split(','));
    else
      throw new Error(
        `unknown argument ${a}; usage: run.js [--quick] [--out FILE] [--only ${sections.map((s) => s.id).join(',')}]`,
      );
  }
  return { quick, out, only };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const config: RunConfig = args.quick ? { quick: true, runs: 1, slowRuns: 1 } : { quick: false, runs: 5, slowRuns: 3 };
  const machine = machineInfo();
  const started = performance.now();
  const reports: SectionReport[] = [];
  for (const s of sections) {
    if (args.only !== null && !args.only.has(s.id)) continue;
    const t0 = performance.now();
    console.error(`[bench] ${s.title} …`);
    try {
      reports.push(await s.run(config));
    } catch (e) {
      // a failed correctness check or crash fails the whole bench: no partial report with wrong numbers
      console.error(`[bench] ${s.title} failed`);
      throw e;
    }
    console.error(`[bench] ${s.title} done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  const command = `npm run bench${args.quick ? ' -- --quick' : ''}`;
  const loadAverageAtEnd = loadavg();
  const totalSeconds = (performance.now() - started) / 1000;
  const fresh = renderReport(machine, config, reports, { loadAverageAtEnd, totalSeconds, command });
  let text = fresh;
  if (args.only !== null) {
    const load = (l: readonly number[]): string => l.map((v) => v.toFixed(2)).join(' ');
    const remeasured =
      `\`npm run bench -- ${args.quick ? '--quick ' : ''}--only ${[...args.only].join(',')}\` on ${machine.date}, ${totalSeconds.toFixed(0)} s, ` +
      `load average (1/5/15 min) ${load(machine.loadAverageAtStart)} at start / ${load(loadAverageAtEnd)} at end${args.quick ? ', QUICK MODE' : ''}.`;
    text = mergeReport(existsSync(args.out) ? readFileSync(args.out, 'utf8') : null, fresh, remeasured);
  }
  writeFileSync(args.out, text);
  console.error(`[bench] wrote ${args.out}`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
