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
  /** peak RSS of the child in bytes when measureRss was asked (GNU time, or python3's getrusage), else null */
  readonly maxRssBytes: number | null;
  /** user + system CPU seconds of the child, measured with the peak RSS (null without measureRss) */
  readonly cpuSeconds: number | null;
}

const hasGnuTime = spawnSync('/usr/bin/time', ['-f', '%M', 'true'], { encoding: 'utf8' }).status === 0;
// without GNU time, python3 runs the command and reports the peak RSS of its (only) child from getrusage
const PY_RSS_WRAPPER =
  'import resource,subprocess,sys\nr=subprocess.run(sys.argv[1:])\n' +
  "u=resource.getrusage(resource.RUSAGE_CHILDREN)\nsys.stderr.write('__CPU__=%f %f __MAXRSS_KB__=%d\\n' % (u.ru_utime,u.ru_stime,u.ru_maxrss))\nsys.exit(r.returncode)";

/** Runs a command to completion; `measureRss` wraps it (GNU time or python3) to read its peak RSS. */
export function runProcess(
  command: string,
  args: readonly string[],
  options: { input?: string; measureRss?: boolean; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<ProcResult> {
  const rss = options.measureRss === true;
  const cmd = !rss ? command : hasGnuTime ? '/usr/bin/time' : 'python3';
  const argv = !rss
    ? [...args]
    : hasGnuTime
      ? ['-f', '__CPU__=%U %S __MAXRSS_KB__=%M', command, ...args]
      : ['-c', PY_RSS_WRAPPER, command, ...args];
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
      let cpuSeconds: number | null = null;
      const m = /__CPU__=([\d.]+) ([\d.]+) __MAXRSS_KB__=(\d+)\s*$/.exec(stderr);
      if (m !== null) {
        cpuSeconds = Number(m[1]) + Number(m[2]);
        maxRssBytes = Number(m[3]) * 1024;
        stderr = stderr.slice(0, m.index);
      }
      resolvePromise({ stdout: Buffer.concat(out).toString('utf8'), stderr, code, wallMs, maxRssBytes, cpuSeconds });
    });
    // a child that exits without reading its input is fine: ignore EPIPE on stdin
    child.stdin.on('error', () => undefined);
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
  // a line per child on stderr: a section of many runs (the audit's takes most of an hour) shows where it is
  const started = performance.now();
  console.error(`[bench]   task ${name} …`);
  const result = await runProcess(process.execPath, [...flags, script, name, JSON.stringify(params)], {
    measureRss: options.measureRss ?? false,
    timeoutMs: options.timeoutMs ?? 20 * 60_000,
  });
  console.error(`[bench]   task ${name} done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
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

export interface Service<T> {
  /** the first JSON line the service printed (its ports) */
  readonly info: T;
  /** the child's process id (for its CPU time in /proc) */
  readonly pid: number | undefined;
  /** stderr so far, for error messages */
  stderr(): string;
  stop(): Promise<void>;
}

/**
 * Starts a long-running child (a simulated worker, the sidecar) and waits for its readiness: either the first
 * JSON line on stdout (`readyLine`) or `ready()` resolving. stop() sends SIGTERM, then SIGKILL after `stopGraceMs`
 * (5 s; a profiled child needs longer: it writes its .cpuprofile only when it exits by itself).
 */
export function startService<T>(
  command: string,
  args: readonly string[],
  options: { readyLine: boolean; ready?: () => Promise<void>; timeoutMs?: number; stopGraceMs?: number },
): Promise<Service<T>> {
  const child = spawn(command, [...args], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (b: Buffer) => {
    err += b.toString('utf8');
    if (err.length > 100_000) err = err.slice(-50_000);
  });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), options.stopGraceMs ?? 5000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolvePromise, reject) => {
    let settled = false;
    const fail = (why: string): void => {
      if (settled) return;
      settled = true;
      void stop().then(() =>
        reject(new Error(`${command} ${args.join(' ').slice(0, 300)}: ${why}\n${err.slice(-4000)}`)),
      );
    };
    const timer = setTimeout(() => fail('not ready in time'), options.timeoutMs ?? 30_000);
    const succeed = (info: T): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolvePromise({ info, pid: child.pid, stderr: () => err, stop });
    };
    child.on('error', (e) => fail(e.message));
    void exited.then((code) => fail(`exited early with code ${String(code)}`));
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString('utf8');
      if (!options.readyLine) return;
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        try {
          succeed(JSON.parse(out.slice(0, nl)) as T);
        } catch {
          fail(`first stdout line is not JSON: ${out.slice(0, 200)}`);
        }
      }
    });
    if (!options.readyLine) {
      const ready = options.ready ?? (() => Promise.resolve());
      ready().then(
        () => succeed(undefined as T),
        (e: unknown) => fail(e instanceof Error ? e.message : String(e)),
      );
    }
  });
}

/** Starts a bench task (bench/tasks) as a service that prints one JSON line when ready. */
export function startTaskService<T>(name: string, params: unknown): Promise<Service<T>> {
  return startService<T>(process.execPath, [join(benchBuildDir, 'task.js'), name, JSON.stringify(params)], {
    readyLine: true,
  });
}
