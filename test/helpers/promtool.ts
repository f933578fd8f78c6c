import { spawnSync } from 'node:child_process';

/** Runs `promtool check metrics` on an exposition; returns its findings for kvsentinel_* lines only. */
export function promtoolProblems(exposition: string): { status: number | null; problems: string[] } {
  const r = spawnSync('promtool', ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
  if (r.error !== undefined)
    throw new Error(`promtool not runnable (install the Debian package 'prometheus'): ${r.error.message}`);
  const lines = `${r.stdout}\n${r.stderr}`.split('\n').filter((l) => l.trim() !== '');
  return { status: r.status, problems: lines.filter((l) => l.includes('kvsentinel_')) };
}
