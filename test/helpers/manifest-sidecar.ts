// Runs the built CLI with a manifest's own sidecar args, the ports moved to free loopback ones (the manifests bind
// fixed pod ports; tests run side by side), so a test can probe it exactly as the kubelet would.
import { freePort, type Cleanup } from './test-resources.js';
import { spawnCli } from './run-cli.js';

export interface K8sProbe {
  readonly httpGet?: { readonly path: string; readonly port: string | number };
}

export interface RunningSidecar {
  /** 127.0.0.1:port of the manifest's --web.listen-address. */
  readonly web: string;
  /** GET a path on the web port; the status code (0: no answer). */
  status(path: string): Promise<number>;
  stderr(): string;
}

/** The manifest's args with every port moved: --web.listen-address, each relay's listen port, each bound socket. */
export async function withFreePorts(args: readonly string[]): Promise<{ args: string[]; web: string }> {
  const out = [...args];
  let web = '';
  for (let i = 0; i < out.length - 1; i++) {
    if (out[i] === '--web.listen-address') {
      web = `127.0.0.1:${await freePort()}`;
      out[i + 1] = web;
    } else if (out[i] === '--relay') {
      const at = out[i + 1]!.lastIndexOf('@');
      out[i + 1] = `${out[i + 1]!.slice(0, at)}@127.0.0.1:${await freePort()}`;
    } else if (out[i] === '--zmq-bind') {
      // rank 0's address; these manifests bind one rank per socket
      out[i + 1] = out[i + 1]!.replace(/^tcp:\/\/[^,]+:\d+/, `tcp://127.0.0.1:${await freePort()}`);
    }
  }
  if (web === '') throw new Error(`no --web.listen-address in ${args.join(' ')}`);
  return { args: out, web };
}

export async function startManifestSidecar(args: readonly string[], cleanups: Cleanup[]): Promise<RunningSidecar> {
  const moved = await withFreePorts(args);
  const child = spawnCli(moved.args, cleanups);
  const status = async (path: string): Promise<number> => {
    try {
      const r = await fetch(`http://${moved.web}${path}`);
      await r.arrayBuffer();
      return r.status;
    } catch {
      return 0;
    }
  };
  // the startup probe's job: wait until the sidecar answers at all (or has exited)
  let exited = false;
  void child.exited.then(() => (exited = true));
  for (;;) {
    if (exited) throw new Error(`the sidecar exited: ${moved.args.join(' ')}\n${child.err()}`);
    if ((await status('/health')) !== 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return { web: moved.web, status, stderr: child.err };
}
