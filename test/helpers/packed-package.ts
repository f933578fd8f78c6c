// The package as `npm pack` makes it, from the dist/ that `npm test` builds before vitest runs (`npm pack` itself
// would rebuild through prepack; --ignore-scripts packs what is there).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './paths.js';

export interface Packed {
  readonly dir: string;
  readonly tarball: string;
  /** Paths inside the package (no leading package/). */
  readonly files: readonly string[];
}

export interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command to completion (never throws on a non-zero exit). */
export function run(
  bin: string,
  args: readonly string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(
      bin,
      args,
      {
        cwd: opts.cwd ?? repoRoot,
        env: { ...process.env, NO_COLOR: '1', ...opts.env },
        timeout: opts.timeoutMs ?? 120_000,
        maxBuffer: 64 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        if (err !== null && (err as NodeJS.ErrnoException).code === 'ENOENT')
          return reject(new Error(`${bin} not found`));
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

export async function packPackage(): Promise<Packed> {
  if (!existsSync(join(repoRoot, 'dist/cli/main.js'))) throw new Error('dist/ is missing: run npm run build first');
  const dir = mkdtempSync(join(tmpdir(), 'kvs-pack-'));
  const r = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir]);
  if (r.code !== 0) throw new Error(`npm pack failed (${r.code}):\n${r.stderr}`);
  const [info] = JSON.parse(r.stdout) as { filename: string; files: { path: string }[] }[];
  if (info === undefined) throw new Error(`npm pack printed no package:\n${r.stdout}`);
  return { dir, tarball: join(dir, info.filename), files: info.files.map((f) => f.path) };
}

export const PACKAGE_VERSION = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string })
  .version;
