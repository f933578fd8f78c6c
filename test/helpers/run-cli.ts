import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './paths.js';
import type { Cleanup } from './test-resources.js';

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the built CLI (dist/, made by `npm ci`'s postprepare step or `npm run build`) as a user would. */
export function runCli(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(repoRoot, 'dist/cli/main.js'), ...args], {
      env: { ...process.env, NO_COLOR: '1', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? 60_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/**
 * Starts the built CLI as a long-running process (`sim serve`, say) and collects its stderr; `cleanups` stops it with
 * `signal` after the test and waits for it to exit.
 */
export function spawnCli(
  args: readonly string[],
  cleanups: Cleanup[],
  signal: NodeJS.Signals = 'SIGTERM',
): { err: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [join(repoRoot, 'dist/cli/main.js'), ...args], {
    env: { ...process.env, NO_COLOR: '1' },
  });
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  child.stdout.resume();
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  cleanups.push(async () => {
    if (child.exitCode === null) child.kill(signal);
    await exited;
  });
  return { err: () => err, exited };
}
