// The machine a report was measured on: CPU, cores, memory, load, and the versions of every runtime compared.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';

export interface MachineInfo {
  readonly cpuModel: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly node: string;
  readonly python: string | null;
  readonly gxx: string | null;
  readonly kernel: string;
  readonly date: string;
  readonly loadAverageAtStart: readonly number[];
}

function firstLine(command: string, args: readonly string[]): string | null {
  const r = spawnSync(command, args, { encoding: 'utf8' });
  if (r.error !== undefined || r.status !== 0) return null;
  const text = `${r.stdout}${r.stderr}`.trim();
  return text.split('\n')[0] ?? null;
}

function cpuModel(): string {
  try {
    const info = readFileSync('/proc/cpuinfo', 'utf8');
    const m = /^model name\s*:\s*(.+)$/m.exec(info);
    if (m !== null) return m[1]!.trim();
  } catch {
    // not Linux: fall back to what os.cpus() says
  }
  return cpus()[0]?.model ?? 'unknown';
}

export function machineInfo(): MachineInfo {
  return {
    cpuModel: cpuModel(),
    cores: cpus().length,
    memoryGiB: totalmem() / 2 ** 30,
    node: process.version,
    python: firstLine('python3', ['--version']),
    gxx: firstLine('g++', ['--version']),
    kernel: firstLine('uname', ['-sr']) ?? 'unknown',
    date: new Date().toISOString(),
    loadAverageAtStart: loadavg(),
  };
}

export function hasGxx(): boolean {
  return firstLine('g++', ['--version']) !== null;
}
