// The llm-d overlay (deploy/kubernetes/llm-d) agrees with itself and with llm-d's central ZMQ mode: it renders with
// kustomize together with the shared monitoring; every vLLM pod's --kv-events-config connects (a host, not a
// wildcard) to the Service port that reaches kvsentinel's bound socket; the topic each pod publishes names it by
// kvsentinel's own topic parser and passes its subscription prefix; the sidecar's --zmq-bind (read by the CLI's own
// parser) binds that port and forwards to the scheduler's socket as llm-d's guide configures it; PYTHONHASHSEED is
// the seed kvsentinel is told. manifest-sidecars.test.ts runs the same args through the CLI.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { parseZmqBindFlag } from '../../src/app/config/zmq-bind-config.js';
import { serverFromTopic } from '../../src/core/stream/publisher-topic.js';
import { K8S_DIR, loadManifests, sidecars, type K8sObject, type PodSpec } from '../helpers/k8s-manifests.js';

// llm-d's precise-prefix-cache-aware guide: the scheduler's Helm release, and the socket its scorer binds
// (kvEventsConfig.zmqEndpoint tcp://*:5557, Service port 5557 on <release>-epp)
const SCHEDULER_SERVICE = 'precise-prefix-cache-aware-scheduler-epp';
const SCHEDULER_ZMQ_PORT = 5557;

function kustomize(dir: string): Promise<K8sObject[]> {
  return new Promise((resolve, reject) => {
    execFile('kubectl', ['kustomize', join(K8S_DIR, dir)], { maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err !== null) return reject(new Error(`kubectl kustomize ${dir}: ${err.message}\n${stderr}`));
      resolve(parseAllDocuments(stdout).map((d) => d.toJS() as K8sObject));
    });
  });
}

/** Kubernetes' $(VAR) expansion of a container's args and env, as the kubelet applies it. */
function expand(text: string, env: Record<string, string>): string {
  return text.replace(/\$\(([A-Z_][A-Z0-9_]*)\)/g, (whole, name: string) => env[name] ?? whole);
}

describe('deploy/kubernetes/llm-d', () => {
  const mine = loadManifests().filter((f) => f.file.startsWith('llm-d/'));
  const objects = mine.flatMap((f) => f.objects);
  const decode = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'decode')!;
  const pod = (decode.spec as { template: { spec: PodSpec } }).template.spec;
  const vllm = pod.containers.find((c) => c.name === 'modelserver')!;
  const [sidecar] = sidecars(mine);
  const sidecarArgs = sidecar!.container.args ?? [];
  const bind = parseZmqBindFlag(sidecarArgs[sidecarArgs.indexOf('--zmq-bind') + 1]!);
  const service = objects.find((o) => o.kind === 'Service' && o.metadata.name === 'kvsentinel-kv-events')!;
  // the kubelet's environment for one pod: fieldRefs become that pod's values
  const podEnv = (ip: string): Record<string, string> => {
    const env: Record<string, string> = { NAMESPACE: 'llm-d-precise', POD_IP: ip };
    for (const v of vllm.env ?? []) if (v.value !== undefined) env[v.name] = expand(v.value, env);
    return env;
  };
  const eventsConfig = (ip: string): Record<string, unknown> => {
    const args = vllm.args ?? [];
    const text = args[args.indexOf('--kv-events-config') + 1]!;
    return JSON.parse(expand(text, podEnv(ip))) as Record<string, unknown>;
  };

  it('renders with kustomize, monitoring included, and the PodMonitor selects kvsentinel', async () => {
    const rendered = await kustomize('llm-d');
    expect(rendered.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(
      expect.arrayContaining([
        'PodMonitor/kvsentinel',
        'PrometheusRule/kvsentinel',
        'Deployment/decode',
        'Deployment/kvsentinel-kv-events',
        'Service/kvsentinel-kv-events',
      ]),
    );
    const pm = rendered.find((o) => o.kind === 'PodMonitor')!;
    const selector = (pm.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels;
    const labels = (sidecar!.workload.spec as { template: { metadata: { labels: Record<string, string> } } }).template
      .metadata.labels;
    expect(labels).toMatchObject(selector);
    const svcSelector = (service.spec as { selector: Record<string, string> }).selector;
    expect(labels).toMatchObject(svcSelector);
  });

  it("each pod's publisher connects to the Service port of kvsentinel's bound socket", () => {
    const config = eventsConfig('10.0.0.7');
    expect(config).toMatchObject({ enable_kv_cache_events: true, publisher: 'zmq' });
    // a host, not a wildcard: vLLM connects (its _is_bind_endpoint binds only *, :: and ipc/inproc)
    const m = /^tcp:\/\/([^:*]+):(\d+)$/.exec(String(config.endpoint));
    expect(m, String(config.endpoint)).not.toBeNull();
    expect(m![1]).toBe(`${service.metadata.name}.llm-d-precise.svc.cluster.local`);
    const port = (service.spec as { ports: { name: string; port: number; targetPort: string }[] }).ports.find(
      (p) => p.port === Number(m![2]),
    )!;
    expect(port, `Service port ${m![2]}`).toBeDefined();
    const target = sidecar!.container.ports!.find((p) => p.name === port.targetPort)!;
    expect(bind.endpoint).toBe(`tcp://*:${target.containerPort}`);
    expect(bind.ranks).toBe(1); // tensor parallel only: one publisher per pod
  });

  it('the topic names each pod (kv@<ip>:<port>@<model>) and passes the subscription prefix', () => {
    const topic = String(eventsConfig('10.0.0.7').topic);
    expect(topic.startsWith(bind.topic)).toBe(true);
    expect(serverFromTopic(topic)).toMatchObject({ server: '10.0.0.7:8000' });
    expect(serverFromTopic(String(eventsConfig('10.0.0.8').topic))?.server).toBe('10.0.0.8:8000');
  });

  it("forwards to the scheduler's socket, and is told the pods' PYTHONHASHSEED", () => {
    expect(bind.forward).toBe(`tcp://${SCHEDULER_SERVICE}:${SCHEDULER_ZMQ_PORT}`);
    expect(bind.engine).toBe('vllm');
    expect(bind.vllmHashing?.seed).toBe(podEnv('10.0.0.7')['PYTHONHASHSEED']);
  });
});
