// CPU time of a process and of its threads, and its peak memory, from /proc (Linux); null where /proc cannot be read.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** user + system ms from a /proc stat line */
function statCpuMs(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

/** CPU time (user + system) a process has used so far. */
export function processCpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    return statCpuMs(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/** A process's CPU so far by thread: its main thread, threads named `named`, and all the others. */
export interface ThreadCpu {
  readonly main: number;
  readonly named: number;
  readonly other: number;
}

export function threadCpuMs(pid: number | undefined, named: string): ThreadCpu | null {
  if (pid === undefined) return null;
  try {
    let main = 0;
    let namedMs = 0;
    let other = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      let stat: string;
      let comm: string;
      try {
        stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      } catch {
        continue; // the thread ended meanwhile
      }
      const ms = statCpuMs(stat);
      if (Number(tid) === pid) main += ms;
      else if (comm === named) namedMs += ms;
      else other += ms;
    }
    return { main, named: namedMs, other };
  } catch {
    return null;
  }
}

/**
 * Starts a process's peak resident set (VmHWM) over from its current RSS (Linux: clear_refs 5), so a later read
 * covers only what came after; false where the kernel refuses (the peak then still covers the whole run).
 */
export function resetPeakRss(pid: number | string = 'self'): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** The peak resident set size of a live process so far (VmHWM), in bytes. */
export function peakRssBytes(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const kb = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? null : Number(kb) * 1024;
  } catch {
    return null;
  }
}
