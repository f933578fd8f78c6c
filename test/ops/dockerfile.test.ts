// What can be checked of the container image without a Docker daemon: the pack stage copies everything the package is
// made of and runs `npm pack`; the install stage installs exactly that tarball (package-install.test.ts runs its command
// word for word); the final stage carries only the installed tree, runs as the non-root user the manifests' security
// context names, exposes the port they probe, and its HEALTHCHECK succeeds against the sidecar started with a
// manifest's own args and fails once it has stopped.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dockerfileStages, installCommand, ops } from '../helpers/dockerfile.js';
import { sidecars } from '../helpers/k8s-manifests.js';
import { startManifestSidecar } from '../helpers/manifest-sidecar.js';
import { run } from '../helpers/packed-package.js';
import { repoRoot } from '../helpers/paths.js';
import type { Cleanup } from '../helpers/test-resources.js';

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  engines: { node: string };
  bin: Record<string, string>;
};
const TARBALL = `${pkg.name}-${pkg.version}.tgz`;
const stages = dockerfileStages();
const [packStage, installStage, finalStage] = stages;
const dockerfileText = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8');

/** The exec form of an instruction (`["a", "b"]`) as its words. */
function execForm(rest: string): string[] {
  return JSON.parse(rest.slice(rest.indexOf('['))) as string[];
}

describe('Dockerfile', () => {
  it('has a pack, an install and a final stage on one pinned Node the package supports', () => {
    expect(stages.map((s) => s.name)).toEqual(['pack', 'install', null]);
    const bases = new Set(stages.map((s) => s.base));
    expect(bases.size).toBe(1);
    const m = /^node:(\d+)\.(\d+)\.(\d+)-bookworm-slim$/.exec([...bases][0]!);
    expect(m, 'a pinned node:X.Y.Z-bookworm-slim').not.toBeNull();
    const [, major, minor] = m!.map(Number);
    const [, needMajor, needMinor] = /^>=(\d+)\.(\d+)$/.exec(pkg.engines.node)!.map(Number);
    expect(major === needMajor ? minor! >= needMinor! : major! > needMajor!).toBe(true);
  });

  it('packs everything the package is made of, with npm pack', async () => {
    const copied = ops(packStage!, 'COPY').flatMap((c) => c.split(/\s+/).slice(0, -1));
    const dry = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts']);
    const files = (JSON.parse(dry.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
    const tops = [...new Set(files.map((f) => f.split('/')[0]!))].filter((t) => t !== 'dist');
    expect(tops.filter((t) => !copied.includes(t))).toEqual([]);
    // dist/ is built there from the sources and the build configuration
    expect(copied).toEqual(
      expect.arrayContaining(['package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'src']),
    );
    expect(ops(packStage!, 'RUN').at(-1)).toMatch(/\bnpm pack --pack-destination \/out$/);
    const ignore = readFileSync(join(repoRoot, '.dockerignore'), 'utf8').split('\n');
    expect(ignore.find((l) => l !== '' && !l.startsWith('#'))).toBe('*');
    for (const c of copied) expect(ignore, `.dockerignore lets ${c} in`).toContain(`!${c}`);
  });

  it('installs exactly the packed tarball, globally, without dev dependencies', () => {
    expect(ops(installStage!, 'COPY')).toEqual([`--from=pack /out/${TARBALL} /tmp/${TARBALL}`]);
    const words = installCommand(stages);
    expect(words.slice(0, 5)).toEqual(['npm', 'install', '--global', '--prefix', '/opt/kvsentinel']);
    expect(words).toContain('--omit=dev');
    expect(words.at(-1)).toBe(`/tmp/${TARBALL}`);
  });

  it('runs the installed command as the non-root user, port and probe the manifests use', () => {
    expect(ops(finalStage!, 'COPY')).toEqual(['--from=install /opt/kvsentinel /opt/kvsentinel']);
    expect(ops(finalStage!, 'ENV').join(' ')).toMatch(/PATH=\/opt\/kvsentinel\/bin:/);
    expect(execForm(ops(finalStage!, 'ENTRYPOINT')[0]!)).toEqual(Object.keys(pkg.bin));
    const [user, group] = ops(finalStage!, 'USER')[0]!.split(':').map(Number);
    expect(user).toBeGreaterThan(0);
    const exposed = ops(finalStage!, 'EXPOSE').map(Number);
    const [health] = ops(finalStage!, 'HEALTHCHECK');
    const url = /http:\/\/127\.0\.0\.1:(\d+)(\/[\w/-]*)/.exec(health ?? '');
    expect(url).not.toBeNull();
    expect(exposed).toEqual([Number(url![1])]);
    const all = sidecars();
    expect(all.length).toBeGreaterThan(0);
    for (const s of all) {
      const where = `${s.file} ${s.workload.metadata.name}`;
      expect(s.container.securityContext, where).toMatchObject({
        runAsNonRoot: true,
        runAsUser: user,
        runAsGroup: group,
        readOnlyRootFilesystem: true,
      });
      const metrics = s.container.ports?.find((p) => p.name === 'metrics');
      expect(metrics?.containerPort, where).toBe(exposed[0]);
      const args = s.container.args ?? [];
      expect(args[args.indexOf('--web.listen-address') + 1], where).toBe(`0.0.0.0:${exposed[0]}`);
      expect(s.container.livenessProbe?.httpGet, where).toEqual({ path: url![2], port: 'metrics' });
      expect(s.container.startupProbe?.httpGet, where).toEqual({ path: url![2], port: 'metrics' });
    }
  });

  it('is the image the manifests run, documented as the one to build and push', () => {
    const tag = /docker build -t (\S+) \. && docker push (\S+)/.exec(dockerfileText);
    expect(tag?.[1]).toBe(tag?.[2]);
    expect(tag?.[1]).toMatch(new RegExp(`:${pkg.version.replace(/\./g, '\\.')}$`));
    for (const s of sidecars()) expect(s.container.image, s.file).toBe(tag?.[1]);
  });

  it("HEALTHCHECK passes against the sidecar run with a manifest's args and fails once it stopped", async () => {
    const [first] = sidecars();
    const own: Cleanup[] = [];
    const sidecar = await startManifestSidecar(first!.container.args ?? [], own);
    const port = sidecar.web.split(':')[1]!;
    const [bin, ...args] = execForm(ops(finalStage!, 'HEALTHCHECK')[0]!.replace(/^.*?CMD\s+/, '')).map((w) =>
      w.replace(/127\.0\.0\.1:\d+/, `127.0.0.1:${port}`),
    );
    expect(bin).toBe('node');
    const check = (): Promise<number> =>
      new Promise((resolve) => execFile(process.execPath, args, (err) => resolve(err === null ? 0 : 1)));
    expect(await check()).toBe(0);
    for (const c of own) await c();
    expect(await check()).toBe(1);
  });
});
