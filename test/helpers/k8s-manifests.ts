// The Kubernetes objects under deploy/kubernetes (every kustomization directory), and the kvsentinel sidecars in
// their pod templates.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from './paths.js';
import type { K8sProbe } from './manifest-sidecar.js';

export const K8S_DIR = join(repoRoot, 'deploy/kubernetes');

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}

export interface Container {
  name: string;
  image: string;
  restartPolicy?: string;
  command?: string[];
  args?: string[];
  env?: { name: string; value?: string }[];
  ports?: { name: string; containerPort: number; protocol?: string }[];
  livenessProbe?: K8sProbe;
  readinessProbe?: K8sProbe;
  startupProbe?: K8sProbe;
  securityContext?: Record<string, unknown>;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  volumeMounts?: { name: string; mountPath: string }[];
}

export interface PodSpec {
  initContainers?: Container[];
  containers: Container[];
  volumes?: { name: string; emptyDir?: unknown; configMap?: unknown }[];
}

export interface ManifestFile {
  /** Path relative to deploy/kubernetes. */
  readonly file: string;
  readonly objects: readonly K8sObject[];
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((f) => {
      const p = join(dir, f);
      if (statSync(p).isDirectory()) return yamlFiles(p);
      return f.endsWith('.yaml') && f !== 'kustomization.yaml' ? [p] : [];
    });
}

export function loadManifests(): ManifestFile[] {
  return yamlFiles(K8S_DIR).map((p) => {
    const file = relative(K8S_DIR, p);
    const docs = parseAllDocuments(readFileSync(p, 'utf8'));
    for (const d of docs) if (d.errors.length > 0) throw new Error(`${file}: ${d.errors.map(String).join('; ')}`);
    return { file, objects: docs.map((d) => d.toJS() as K8sObject) };
  });
}

export interface Sidecar {
  readonly file: string;
  readonly workload: K8sObject;
  readonly pod: PodSpec;
  readonly container: Container;
}

/** Every container named kvsentinel in a workload's pod template. */
export function sidecars(files = loadManifests()): Sidecar[] {
  return files.flatMap(({ file, objects }) =>
    objects.flatMap((workload) => {
      const pod = (workload.spec?.template as { spec?: PodSpec } | undefined)?.spec;
      if (pod === undefined) return [];
      return [...(pod.initContainers ?? []), ...pod.containers]
        .filter((c) => c.name === 'kvsentinel')
        .map((container) => ({ file, workload, pod, container }));
    }),
  );
}
