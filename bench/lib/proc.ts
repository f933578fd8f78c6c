// Child processes: every measured run happens in a fresh process so JIT state, heap and RSS of one run never
// leak into the next. Tasks print exactly one JSON object on stdout.
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { benchBuildDir, repoRoot } from './paths.js';

export interface ProcResult {
  readonly stdout: string;
  readonly stderr: string;
  readonly code: number | null;
  readonly wallMs: number;
  /** peak RSS of the child in bytes (from /usr/bin/time -f %M when available), else null */
  readonly maxRssBytes: number | null;
}

const hasGnuTime = spawnSync('/usr/bin/time', ['-f', '%M', 'true'], { encoding: 'utf8' }).status === 0;

/** Runs a command to completion; `measureRss` wraps it in /usr/bin/time to read the peak RSS. */
export function runProcess(
  command: string,
  args: readonly string[],
  options: { input?: string; measureRss?: boolean; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<ProcResult> {
  const wrap = options.measureRss === true && hasGnuTime;
  const cmd = wrap ? '/usr/bin/time' : command;
  const argv = wrap ? ['-f', '__MAXRSS_KB__=%M', command, ...args] : [...args];
  return new Promise((resolvePromise, reject) => {
    const start = performance.now();
    const child = spawn(cmd, argv, { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'], env: options.env ?? process.env });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    const timer =
      options.timeoutMs === undefined
        ? null
        : setTimeout(() => {
            child.kill('SIGKILL');
          }, options.timeoutMs);
    child.on('error', (e) => {
      if (timer !== null) clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      if (timer !== null) clearTimeout(timer);
      const wallMs = performance.now() - start;
      let stderr = Buffer.concat(err).toString('utf8');
      let maxRssBytes: number | null = null;
      const m = /__MAXRSS_KB__=(\d+)\s*$/.exec(stderr);
      if (m !== null) {
        maxRssBytes = Number(m[1]) * 1024;
        stderr = stderr.slice(0, m.index);
      }
      resolvePromise({ stdout: Buffer.concat(out).toString('utf8'), stderr, code, wallMs, maxRssBytes });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** Parses the last non-empty stdout line of a task as JSON, failing loudly with the child's stderr. */
export function parseTaskOutput<T>(what: string, result: ProcResult): T {
  if (result.code !== 0) {
    throw new Error(`${what} exited with ${String(result.code)}:\n${result.stderr.slice(-4000)}`);
  }
  const lines = result.stdout.trim().split('\n');
  const last = lines[lines.length - 1] ?? '';
  try {
    return JSON.parse(last) as T;
  } catch {
    throw new Error(`${what} printed no JSON result:\n${result.stdout.slice(-2000)}\n${result.stderr.slice(-2000)}`);
  }
}

/** Runs one bench task (bench/tasks/<name>.ts) in a fresh `node --expose-gc` process. */
export async function runNodeTask<T>(
  name: string,
  params: unknown,
  options: { nodeFlags?: readonly string[]; measureRss?: boolean; timeoutMs?: number } = {},
): Promise<T & { maxRssBytes: number | null }> {
  const script = join(benchBuildDir, 'task.js');
  const flags = ['--expose-gc', ...(options.nodeFlags ?? [])];
  const result = await runProcess(process.execPath, [...flags, script, name, JSON.stringify(params)], {
    measureRss: options.measureRss ?? false,
    timeoutMs: options.timeoutMs ?? 20 * 60_000,
  });
  return { ...parseTaskOutput<T>(`task ${name}`, result), maxRssBytes: result.maxRssBytes };
}

/** Runs a python3 baseline script under bench/baselines with the given arguments. */
export async function runPython<T>(
  script: string,
  args: readonly string[],
  options: { input?: string; measureRss?: boolean } = {},
): Promise<T & { maxRssBytes: number | null }> {
  const result = await runProcess('python3', [join(repoRoot, 'bench/baselines', script), ...args], {
    ...options,
    timeoutMs: 20 * 60_000,
  });
  return { ...parseTaskOutput<T>(`python3 ${script}`, result), maxRssBytes: result.maxRssBytes };
}
