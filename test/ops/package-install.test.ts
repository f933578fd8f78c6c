// The artifact users install: `npm pack`, then a global install into an empty temporary prefix with npm's own cache
// (the one `npm ci` filled; the registry only for what it lacks), then the installed command run from an empty folder.
// The install is the Dockerfile's install stage, word for word, with its prefix and tarball paths pointed here.
// No dev dependency, no test file, no install script of our own, and npm says nothing about zeromq's.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dockerfileStages, installCommand } from '../helpers/dockerfile.js';
import { PACKAGE_VERSION, packPackage, run, type Packed } from '../helpers/packed-package.js';
import { repoRoot } from '../helpers/paths.js';

const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'];

describe('npm pack → install into an empty prefix → run', () => {
  let packed: Packed;
  let prefix: string;
  let install: { code: number; stdout: string; stderr: string };
  const dirs: string[] = [];
  beforeAll(async () => {
    packed = await packPackage();
    dirs.push(packed.dir);
    prefix = mkdtempSync(join(tmpdir(), 'kvs-prefix-'));
    dirs.push(prefix);
    const [bin, ...args] = installCommand(dockerfileStages()).map((w) =>
      w === '/opt/kvsentinel' ? prefix : w.endsWith('.tgz') ? packed.tarball : w,
    );
    expect(args).toContain(packed.tarball);
    install = await run(bin!, [...args, '--prefer-offline'], { cwd: packed.dir, timeoutMs: 170_000 });
  }, 180_000);
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('ships the built CLI and operator files, and no test, source or fixture', () => {
    expect(packed.files).toContain('dist/cli/main.js');
    expect(packed.files).toContain('alerts/kvsentinel.rules.yaml');
    expect(packed.files).toContain('deploy/kubernetes/kustomization.yaml');
    const unwanted = packed.files.filter(
      (f) => /(^|\/)(tests?|__tests__|fixtures)\//.test(f) || /\.(test|spec)\.[cm]?[jt]s$/.test(f) || /^src\//.test(f),
    );
    expect(unwanted).toEqual([]);
  });

  it('declares no install script of its own and allows only zeromq', () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
      allowScripts: Record<string, boolean>;
      dependencies: Record<string, string>;
    };
    expect(Object.keys(pkg.scripts).filter((s) => INSTALL_SCRIPTS.includes(s))).toEqual([]);
    expect(pkg.allowScripts).toEqual({ zeromq: true });
    expect(pkg.dependencies.zeromq).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('installs without warnings about install scripts and without dev dependencies', () => {
    expect(install.stderr + install.stdout).not.toMatch(/install-scripts|not yet covered by allowScripts/);
    expect(install.code, install.stderr).toBe(0);
    const installed = join(prefix, 'lib/node_modules');
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    const present = new Set([
      ...readdirSync(installed),
      ...readdirSync(join(installed, 'kvsentinel/node_modules')).flatMap((n) =>
        n.startsWith('@') ? readdirSync(join(installed, 'kvsentinel/node_modules', n)).map((m) => `${n}/${m}`) : [n],
      ),
    ]);
    expect(present.has('zeromq')).toBe(true);
    expect(Object.keys(pkg.devDependencies).filter((d) => present.has(d))).toEqual([]);
  });

  it('runs `kvsentinel --version` and a 10 s demo from an empty folder', async () => {
    expect(install.code, install.stderr).toBe(0);
    const bin = join(prefix, 'bin/kvsentinel');
    const version = await run(bin, ['--version']);
    expect(version.stdout.trim()).toBe(PACKAGE_VERSION);
    const cwd = join(prefix, 'empty');
    mkdirSync(cwd);
    const demo = await run(bin, ['demo', '--duration', '10s', '--no-progress'], { cwd, timeoutMs: 120_000 });
    expect(demo.code, demo.stderr).toBe(0);
    expect(demo.stdout).toMatch(/^Verdict: INERT /m);
    expect(demo.stdout).toContain('events-absent');
  }, 130_000);
});
