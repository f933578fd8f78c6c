import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, parseAllDocuments, stringify } from 'yaml';
import { repoRoot } from '../helpers/paths.js';
import { alertRules, loadRuleGroups, runTool } from '../helpers/prom-tools.js';

const K8S = join(repoRoot, 'deploy/kubernetes');

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}
interface Probe {
  httpGet?: { path: string; port: string };
}
interface Container {
  name: string;
  image: string;
  restartPolicy?: string;
  args?: string[];
  ports?: { name: string; containerPort: number }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  securityContext?: Record<string, unknown>;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
}
interface PodSpec {
  initContainers?: Container[];
  containers: Container[];
}

/** The TensorRT-LLM deployment (the top-level kustomization) and the monitoring it shares with the overlays. */
function loadObjects(): { file: string; obj: K8sObject }[] {
  const dirs = ['.', 'monitoring'];
  return dirs.flatMap((dir) =>
    readdirSync(join(K8S, dir))
      .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
      .sort()
      .flatMap((f) => {
        const file = join(dir, f);
        return parseAllDocuments(readFileSync(join(K8S, file), 'utf8')).map((doc) => {
          expect(doc.errors, file).toEqual([]);
          return { file, obj: doc.toJS() as K8sObject };
        });
      }),
  );
}

const objects = loadObjects();
function one(kind: string, name?: string): K8sObject {
  const found = objects.filter((o) => o.obj.kind === kind && (name === undefined || o.obj.metadata.name === name));
  expect(
    found.map((f) => f.obj.metadata.name),
    kind,
  ).toHaveLength(1);
  return found[0]!.obj;
}

const tmpRoots: string[] = [];
afterAll(() => {
  for (const d of tmpRoots) rmSync(d, { recursive: true, force: true });
});
function tempCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kvs-k8s-'));
  tmpRoots.push(dir);
  for (const sub of ['alerts', 'dashboards', 'deploy'])
    cpSync(join(repoRoot, sub), join(dir, sub), { recursive: true });
  return dir;
}

describe('deploy/kubernetes generated files', () => {
  it('are in sync with alerts/ and dashboards/ (npm run gen:k8s)', async () => {
    const r = await runTool('node', ['scripts/gen-k8s.js', '--check']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('are reported stale after a rule changes, and regenerate', async () => {
    const root = tempCopy();
    const rules = join(root, 'alerts/kvsentinel.rules.yaml');
    writeFileSync(rules, readFileSync(rules, 'utf8').replace('for: 15m', 'for: 20m'));
    const stale = await runTool('node', ['scripts/gen-k8s.js', '--check', '--root', root]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('deploy/kubernetes/monitoring/prometheus-rule.yaml is stale');
    expect(stale.stderr).not.toContain('grafana-dashboards');
    expect((await runTool('node', ['scripts/gen-k8s.js', '--write', '--root', root])).code).toBe(0);
    expect((await runTool('node', ['scripts/gen-k8s.js', '--check', '--root', root])).code).toBe(0);
  });

  it('PrometheusRule spec.groups equals the rule file and passes promtool', async () => {
    const rule = one('PrometheusRule', 'kvsentinel');
    expect(rule.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(rule.metadata.labels?.release).toBeTruthy();
    expect(rule.spec?.groups).toEqual(loadRuleGroups());
    const dir = tempCopy();
    const file = join(dir, 'from-prometheus-rule.yaml');
    writeFileSync(file, stringify({ groups: rule.spec?.groups }));
    const r = await runTool('promtool', ['check', 'rules', file]);
    expect(r.code).toBe(0);
  });

  it('dashboards ConfigMap carries every dashboard unchanged, labelled for the Grafana sidecar', () => {
    const cm = one('ConfigMap', 'kvsentinel-dashboards');
    expect(cm.metadata.labels?.grafana_dashboard).toBe('1');
    const files = readdirSync(join(repoRoot, 'dashboards'))
      .filter((f) => f.endsWith('.json'))
      .sort();
    expect(Object.keys(cm.data ?? {}).sort()).toEqual(files);
    for (const f of files) expect(cm.data?.[f], f).toBe(readFileSync(join(repoRoot, 'dashboards', f), 'utf8'));
  });
});

describe('deploy/kubernetes sidecar in relay mode', () => {
  const deployment = one('Deployment', 'trtllm-orchestrator');
  const template = deployment.spec?.template as { metadata: { labels: Record<string, string> }; spec: PodSpec };
  const podLabels = template.metadata.labels;
  const pod = template.spec;
  const sidecar = (pod.initContainers ?? []).find((c) => c.name === 'kvsentinel');
  const disagg = parseYaml(one('ConfigMap', 'trtllm-orchestrator').data?.['disagg.yaml'] ?? '') as {
    context_servers: { num_instances: number; urls: string[]; router: { type: string; tokens_per_block?: number } };
  };

  it('runs kvsentinel as a native sidecar that starts before the orchestrator', () => {
    expect(sidecar).toBeDefined();
    expect(sidecar?.restartPolicy).toBe('Always');
    expect(pod.containers.map((c) => c.name)).toContain('orchestrator');
    expect(sidecar?.args?.[0]).toBe('serve');
  });

  it('relays every CTX server the router lists, on loopback ports in the same order', () => {
    const args = sidecar?.args ?? [];
    const relays = args.flatMap((a, i) => (a === '--relay' ? [args[i + 1] ?? ''] : []));
    expect(relays.length).toBeGreaterThan(0);
    const parsed = relays.map((r) => {
      const m = /^([a-z0-9-]+)=(https?:\/\/[^@\s]+)@(?:([\d.]+):)?(\d+)$/.exec(r);
      expect(m, r).not.toBeNull();
      return { id: m?.[1], host: m?.[3], port: Number(m?.[4]) };
    });
    expect(new Set(parsed.map((p) => p.id)).size).toBe(parsed.length);
    expect(disagg.context_servers.urls).toEqual(parsed.map((p) => `127.0.0.1:${p.port}`));
    expect(parsed.every((p) => p.host === '127.0.0.1')).toBe(true);
    expect(disagg.context_servers.num_instances).toBe(parsed.length);
    expect(disagg.context_servers.router.type).toBe('kv_cache_aware');
    expect(disagg.context_servers.router.tokens_per_block).toBe(128);
    const listen = args[args.indexOf('--web.listen-address') + 1] ?? '';
    const metricsPort = sidecar?.ports?.find((p) => p.name === 'metrics')?.containerPort;
    expect(listen).toBe(`0.0.0.0:${metricsPort ?? -1}`);
    expect(parsed.map((p) => p.port)).not.toContain(metricsPort);
  });

  it('is hardened and probed without depending on the router', () => {
    expect(sidecar?.securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(sidecar?.livenessProbe?.httpGet).toEqual({ path: '/health', port: 'metrics' });
    expect(sidecar?.readinessProbe?.httpGet).toEqual({ path: '/-/ready', port: 'metrics' });
    expect(sidecar?.resources?.requests).toBeDefined();
    expect(sidecar?.resources?.limits?.memory).toBeDefined();
    for (const p of sidecar?.ports ?? []) expect(p.name).toMatch(/^[a-z0-9-]{1,15}$/);
  });

  it('has a Service and a PodMonitor that select the pod and name ports it has', () => {
    const allPorts = new Set(
      [...(pod.initContainers ?? []), ...pod.containers].flatMap((c) => (c.ports ?? []).map((p) => p.name)),
    );
    const svc = one('Service');
    const svcSpec = svc.spec as { selector: Record<string, string>; ports: { name: string; targetPort: string }[] };
    expect(podLabels).toMatchObject(svcSpec.selector);
    for (const p of svcSpec.ports) expect(allPorts, p.name).toContain(p.targetPort);
    expect(svcSpec.ports.map((p) => p.name)).toContain('metrics');

    const pm = one('PodMonitor', 'kvsentinel');
    const pmSpec = pm.spec as {
      selector: { matchLabels: Record<string, string> };
      podMetricsEndpoints: {
        port: string;
        path: string;
        relabelings?: { action: string; targetLabel: string; replacement: string }[];
      }[];
    };
    expect(pm.metadata.labels?.release).toBeTruthy();
    expect(podLabels).toMatchObject(pmSpec.selector.matchLabels);
    expect(pmSpec.podMetricsEndpoints).toHaveLength(1);
    const ep = pmSpec.podMetricsEndpoints[0];
    expect(allPorts).toContain(ep?.port);
    expect(ep?.path).toBe('/metrics');
    // The alerts assume job="kvsentinel" (KvSentinelAbsent selects it exactly).
    const job = ep?.relabelings?.find((r) => r.targetLabel === 'job');
    expect(job).toEqual({ action: 'replace', targetLabel: 'job', replacement: 'kvsentinel' });
    const absent = alertRules().find((a) => a.alert === 'KvSentinelAbsent');
    expect(absent?.expr).toContain(`job="${job?.replacement ?? ''}"`);
  });

  it('kustomization lists every manifest beside it, and the shared monitoring', () => {
    for (const dir of ['.', 'monitoring']) {
      const k = parseYaml(readFileSync(join(K8S, dir, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
      const files = readdirSync(join(K8S, dir)).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
      expect([...k.resources].filter((r) => r.endsWith('.yaml')).sort(), dir).toEqual(files.sort());
      if (dir === '.') expect(k.resources).toContain('monitoring');
    }
  });
});
