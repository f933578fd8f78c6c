// The vLLM and SGLang overlays (deploy/kubernetes/vllm, deploy/kubernetes/sglang) agree with themselves and with the
// engines: each renders with kustomize (kubectl kustomize) together with the shared monitoring; each worker's
// --kv-events-config is the engine's JSON, its data-parallel (vLLM --data-parallel-size) or attention-DP (SGLang
// --dp with --enable-dp-attention) ranks publish at port + rank and replay at replay port + rank, ports the pod and
// its Service declare; the sidecar's --zmq (read by the CLI's own parser) subscribes to exactly those, one per worker
// pod, with the id of the --relay that proxies that pod; and the router sends its traffic to those relay ports, in
// order. manifest-sidecars.test.ts runs the same args through the CLI.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { parseZmqFlag } from '../../src/app/config/zmq-config.js';
import {
  K8S_DIR,
  loadManifests,
  sidecars,
  type Container,
  type K8sObject,
  type PodSpec,
} from '../helpers/k8s-manifests.js';

interface Engine {
  readonly dir: string;
  readonly engine: 'vllm' | 'sglang';
  /** the worker's data-parallel rank count, from its args */
  ranks(args: readonly string[]): number;
  /** the router's backends, in order */
  backends(router: Container): string[];
}

function flag(args: readonly string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args[i + 1];
}

const ENGINES: Engine[] = [
  {
    dir: 'vllm',
    engine: 'vllm',
    ranks: (args) => Number(flag(args, '--data-parallel-size') ?? 1),
    backends: (router) => (flag(router.args ?? [], '--static-backends') ?? '').split(','),
  },
  {
    dir: 'sglang',
    engine: 'sglang',
    // sglang publishes per attention-DP rank only with --enable-dp-attention; otherwise one publisher
    ranks: (args) => (args.includes('--enable-dp-attention') ? Number(flag(args, '--dp') ?? 1) : 1),
    backends: (router) => {
      const args = router.args ?? [];
      const from = args.indexOf('--worker-urls') + 1;
      const end = args.findIndex((a, i) => i >= from && a.startsWith('--'));
      return args.slice(from, end < 0 ? undefined : end);
    },
  },
];

function kustomize(dir: string): Promise<K8sObject[]> {
  return new Promise((resolve, reject) => {
    execFile('kubectl', ['kustomize', join(K8S_DIR, dir)], { maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err !== null) return reject(new Error(`kubectl kustomize ${dir}: ${err.message}\n${stderr}`));
      resolve(parseAllDocuments(stdout).map((d) => d.toJS() as K8sObject));
    });
  });
}

/** `tcp://*:PORT` → PORT (the engines bind; any other form is not what these manifests use). */
function boundPort(endpoint: unknown): number {
  const m = typeof endpoint === 'string' ? /^tcp:\/\/\*:(\d+)$/.exec(endpoint) : null;
  expect(m, `a bind endpoint tcp://*:PORT, got ${String(endpoint)}`).not.toBeNull();
  return Number(m![1]);
}

const files = loadManifests();

describe.each(ENGINES)('deploy/kubernetes/$dir', (e) => {
  const mine = files.filter((f) => f.file.startsWith(`${e.dir}/`));
  const objects = mine.flatMap((f) => f.objects);
  const workers = objects.find((o) => o.kind === 'StatefulSet')!;
  const workerService = objects.find(
    (o) => o.kind === 'Service' && o.metadata.name === (workers.spec as { serviceName: string }).serviceName,
  )!;
  const workerPod = (workers.spec as { template: { spec: PodSpec } }).template.spec;
  const engineContainer = workerPod.containers[0]!;
  const args = engineContainer.args ?? [];
  const [sidecar] = sidecars(mine);
  const sidecarArgs = sidecar?.container.args ?? [];
  const values = (name: string): string[] => sidecarArgs.flatMap((a, i) => (a === name ? [sidecarArgs[i + 1]!] : []));

  it('renders with kustomize, monitoring included, and the PodMonitor selects the sidecar pod', async () => {
    const rendered = await kustomize(e.dir);
    const kinds = rendered.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(kinds).toEqual(
      expect.arrayContaining([
        'PodMonitor/kvsentinel',
        'PrometheusRule/kvsentinel',
        'ConfigMap/kvsentinel-dashboards',
        `StatefulSet/${workers.metadata.name}`,
        `Deployment/${sidecar!.workload.metadata.name}`,
      ]),
    );
    const pm = rendered.find((o) => o.kind === 'PodMonitor')!;
    const selector = (pm.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels;
    const podLabels = (sidecar!.workload.spec as { template: { metadata: { labels: Record<string, string> } } })
      .template.metadata.labels;
    expect(podLabels).toMatchObject(selector);
  });

  it("the workers' --kv-events-config is the engine's JSON, one publisher and replay port per rank", () => {
    const config = JSON.parse(flag(args, '--kv-events-config') ?? 'null') as Record<string, unknown>;
    expect(config.publisher).toBe('zmq');
    // vLLM publishes only with enable_kv_cache_events; SGLang publishes whenever the flag is given
    if (e.engine === 'vllm') expect(config.enable_kv_cache_events).toBe(true);
    else expect(config).not.toHaveProperty('enable_kv_cache_events');
    const ranks = e.ranks(args);
    expect(ranks).toBeGreaterThan(1); // the example shows the rank offsets
    const pub = boundPort(config.endpoint);
    const replay = boundPort(config.replay_endpoint);
    const pubs = Array.from({ length: ranks }, (_, r) => pub + r);
    const replays = Array.from({ length: ranks }, (_, r) => replay + r);
    expect(pubs.filter((p) => replays.includes(p))).toEqual([]);
    const podPorts = (engineContainer.ports ?? []).map((p) => p.containerPort);
    const svcPorts = (workerService.spec as { ports: { port: number }[] }).ports.map((p) => p.port);
    for (const p of [...pubs, ...replays]) {
      expect(podPorts, `pod port ${p}`).toContain(p);
      expect(svcPorts, `service port ${p}`).toContain(p);
    }
  });

  it('the sidecar subscribes to every rank of every worker pod, under the id of the relay that proxies it', () => {
    const config = JSON.parse(flag(args, '--kv-events-config')!) as { endpoint: string; replay_endpoint: string };
    const replicas = (workers.spec as { replicas: number }).replicas;
    const host = (i: number): string => `${workers.metadata.name}-${i}.${workerService.metadata.name}`;
    const httpPort = engineContainer.ports!.find((p) => p.name === 'http')!.containerPort;
    const relays = values('--relay').map((r) => /^([^=]+)=(http:\/\/[^@]+)@127\.0\.0\.1:(\d+)$/.exec(r));
    const zmq = values('--zmq').map(parseZmqFlag);
    expect(relays).toHaveLength(replicas);
    expect(zmq).toHaveLength(replicas);
    for (let i = 0; i < replicas; i++) {
      expect(relays[i], values('--relay')[i]).not.toBeNull();
      expect(relays[i]![2]).toBe(`http://${host(i)}:${httpPort}`);
      expect(zmq[i]).toMatchObject({
        id: relays[i]![1],
        engine: e.engine,
        ranks: e.ranks(args),
        endpoint: `tcp://${host(i)}:${boundPort(config.endpoint)}`,
        replay: `tcp://${host(i)}:${boundPort(config.replay_endpoint)}`,
      });
      if (e.engine === 'vllm')
        expect(zmq[i]?.vllmHashing).toEqual({
          algo: flag(args, '--prefix-caching-hash-algo'),
          seed: engineContainer.env?.find((v) => v.name === 'PYTHONHASHSEED')?.value,
        });
    }
  });

  it("the router's backends are the relay ports, in order", () => {
    const router = sidecar!.pod.containers.find((c) => c.name === 'router')!;
    const ports = values('--relay').map((r) => r.slice(r.lastIndexOf('@') + 1));
    expect(e.backends(router)).toEqual(ports.map((p) => `http://${p}`));
    if (e.engine === 'vllm')
      expect((flag(router.args ?? [], '--static-models') ?? '').split(',')).toHaveLength(ports.length);
  });
});
