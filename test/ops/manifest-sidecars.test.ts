// Every kvsentinel sidecar in deploy/kubernetes, run by the CLI with the manifest's own args: they pass
// `serve --config.check` exactly as written, and the sidecar started with them (ports moved to free loopback ones)
// answers each of the manifest's probes the way the kubelet needs (startup and liveness at once, readiness once its
// sources are started) while nothing it watches is reachable.
import { describe, expect, it } from 'vitest';
import { sidecars } from '../helpers/k8s-manifests.js';
import { startManifestSidecar } from '../helpers/manifest-sidecar.js';
import { runCli } from '../helpers/run-cli.js';
import { cleanupsAfterEach, type Cleanup } from '../helpers/test-resources.js';

const all = sidecars();

describe('the manifests’ sidecar args, run by the CLI', () => {
  const cleanups: Cleanup[] = cleanupsAfterEach();

  it("there is a sidecar in every engine's kustomization", () => {
    const dirs = new Set(all.map((s) => (s.file.includes('/') ? s.file.slice(0, s.file.indexOf('/')) : '.')));
    expect([...dirs].sort()).toEqual(['.', 'llm-d', 'sglang', 'vllm']);
  });

  for (const s of all) {
    const where = `${s.file} ${s.workload.metadata.name}`;
    const args = s.container.args ?? [];

    it(`${where}: serve --config.check accepts them as written`, async () => {
      expect(args[0]).toBe('serve');
      const r = await runCli([...args, '--config.check']);
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe('configuration is valid\n');
      expect(r.code).toBe(0);
    });

    it(`${where}: the sidecar started with them answers its probes`, async () => {
      const sidecar = await startManifestSidecar(args, cleanups);
      const probes = [s.container.startupProbe, s.container.livenessProbe, s.container.readinessProbe];
      expect(probes.every((p) => p?.httpGet?.port === 'metrics')).toBe(true);
      for (const p of probes.slice(0, 2)) expect(await sidecar.status(p!.httpGet!.path), p!.httpGet!.path).toBe(200);
      const ready = s.container.readinessProbe!.httpGet!.path;
      for (;;) {
        const code = await sidecar.status(ready);
        if (code === 200) break;
        expect(code, `${ready}: ready or not yet (${sidecar.stderr()})`).toBe(503);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(await sidecar.status('/metrics')).toBe(200);
    });
  }
});
