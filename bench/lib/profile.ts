// Reads a V8 .cpuprofile (node --cpu-prof) and summarises self time per function, so a section that misses its
// target can print where the time goes.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  }[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface ProfileEntry {
  readonly fn: string;
  readonly selfMs: number;
  readonly share: number;
}

/** A fresh directory for `--cpu-prof-dir`, and the node flags that write one profile into it. */
export function profileDir(): { dir: string; flags: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'kvs-bench-prof-'));
  return { dir, flags: ['--cpu-prof', `--cpu-prof-dir=${dir}`] };
}

/** Self time per function (idle excluded), the `count` largest, and the busy total. */
export function topSelfTime(dir: string, count: number): { entries: ProfileEntry[]; totalMs: number } {
  // CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile: worker threads write their own; the main thread is id 0
  const files = readdirSync(dir).filter((n) => n.endsWith('.cpuprofile'));
  const file = files.find((n) => n.split('.').at(-3) === '0') ?? files[0];
  if (file === undefined) throw new Error(`no .cpuprofile written in ${dir}`);
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  rmSync(dir, { recursive: true, force: true });
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    const dt = profile.timeDeltas[i] ?? 0;
    // waiting is not work: shares are of the time the process was busy
    if (node === undefined || node.callFrame.functionName === '(idle)') return;
    total += dt;
    const cf = node.callFrame;
    const where = cf.url === '' ? '' : ` (${cf.url.split('/').slice(-2).join('/')}:${cf.lineNumber + 1})`;
    const key = `${cf.functionName === '' ? '(anonymous)' : cf.functionName}${where}`;
    self.set(key, (self.get(key) ?? 0) + dt);
  });
  const entries = [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([fn, us]) => ({ fn, selfMs: us / 1000, share: total === 0 ? 0 : us / total }));
  return { entries, totalMs: total / 1000 };
}

/** "12.3% foo (x.js:10), 8.1% bar …" */
export function formatTop(entries: readonly ProfileEntry[]): string {
  return entries.map((e) => `${(100 * e.share).toFixed(1)}% \`${e.fn}\``).join(', ');
}
