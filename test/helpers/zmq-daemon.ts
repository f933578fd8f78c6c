// The sidecar in front of a live simulated cluster whose workers publish KV events over ZMQ: a `ctxUrls` hook that
// starts the real daemon with one relay per CTX worker (the orchestrator routes through it) and one --zmq stream
// per worker (its publisher's rank-0 endpoints, ranks, replay), the engine named after the publisher's format.
import { buildConfig } from '../../src/app/config/serve-config.js';
import { createDaemon, type Daemon } from '../../src/app/daemon/daemon.js';
import type { LiveWorkerInfo } from '../../src/sim/live/live-cluster.js';

export function engineOf(format: string): 'trtllm' | 'vllm' | 'sglang' {
  return format === 'trtllm' ? 'trtllm' : format === 'sglang' ? 'sglang' : 'vllm';
}

export function zmqDaemonCtxUrls(
  holder: { daemon: Daemon | null },
  options: { replay?: boolean; vllmHashing?: { hash_algo: string; python_hash_seed: string } } = {},
): (workers: readonly LiveWorkerInfo[]) => Promise<Record<string, string>> {
  return async (workers) => {
    const zmq = workers.map((w) => {
      if (w.zmq === null) throw new Error(`${w.id} publishes no ZMQ stream (set ctx.kv_events_publisher)`);
      return {
        id: w.id,
        endpoint: w.zmq.endpoint,
        engine: engineOf(w.zmq.format),
        ranks: w.zmq.ranks,
        ...(options.replay !== false && w.zmq.replay !== null ? { replay_endpoint: w.zmq.replay } : {}),
        ...(options.vllmHashing ?? {}),
      };
    });
    const daemon = createDaemon(
      buildConfig(
        {
          web: { listen_address: '127.0.0.1:0' },
          relays: workers.map((w) => ({ id: w.id, upstream: w.url, listen: '127.0.0.1:0' })),
          zmq,
          relay: { drain_interval: '100ms' },
          server_info_interval: '1s',
        },
        {},
      ),
    );
    holder.daemon = daemon;
    await daemon.start();
    return Object.fromEntries(workers.map((w) => [w.id, `127.0.0.1:${daemon.relayAddress(w.id)?.port ?? 0}`]));
  };
}
