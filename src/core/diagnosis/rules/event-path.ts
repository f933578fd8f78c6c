// Whether the KV-event path can feed the router's table at all, from what the sidecar saw: events absent on every
// serving server, never polled, polling skipped by design (the newest router on a tokens_per_block mismatch), or a
// stated router chunk size that differs from the workers' block size. Shared by cache-signal-inert,
// evidence-insufficient and event-signal-masked.
import { streamEngineDeployment } from './own-table-advice.js';
import type { DiagnosisInput, ServerDiagnosis } from '../rule.js';

export interface DeadEventPath {
  /** what stops the events, per cause, for summaries */
  readonly causes: readonly string[];
  /** the configuration change that restores the event path */
  readonly restore: readonly string[];
}

function serving(input: DiagnosisInput): ServerDiagnosis[] {
  return input.servers.filter((s) => s.requests >= input.thresholds.minServerRequests);
}

export function workerBlockSizes(input: DiagnosisInput): number[] {
  return [
    ...new Set(
      input.servers.map((s) => s.advertisedBlockSize ?? s.inferredBlockSize).filter((v): v is number => v !== null),
    ),
  ].sort((a, b) => a - b);
}

/** Null while the event path may be alive (or the sidecar cannot see it). */
export function deadEventPath(input: DiagnosisInput): DeadEventPath | null {
  if (!input.router.consumesEvents) return null;
  const servers = serving(input);
  if (servers.length === 0) return null;
  const causes: string[] = [];
  const restore: string[] = [];
  if (input.seesWorkerEvents && servers.every((s) => s.eventsTotal === 0)) {
    // name the deployment's own endpoint: a vLLM/SGLang worker has no /kv_cache_events
    if (streamEngineDeployment(input)) {
      causes.push("no KV event ever arrived on the workers' ZMQ KV-event streams");
      restore.push(
        'KV events on the workers (vLLM: --kv-events-config with "enable_kv_cache_events": true and prefix caching on; SGLang: --kv-events-config)',
      );
    } else {
      causes.push("no KV event ever came out of the workers' /kv_cache_events");
      restore.push(
        'kv_cache_config.event_buffer_max_size > 0 and enable_block_reuse: true on the CTX workers (no kv_events_config push mode)',
      );
    }
  }
  const skipped = servers.filter((s) => s.pollingSkipped !== null);
  if (skipped.length === servers.length) {
    const s = skipped[0]!.pollingSkipped!;
    causes.push(
      `the router skips event polling by design: its tokens_per_block ${s.routerTokensPerBlock} differs from the workers' ${s.workerTokensPerBlock}`,
    );
    restore.push(
      `leave router_args.tokens_per_block unset (the newest router adopts the worker's) or set it to ${s.workerTokensPerBlock}`,
    );
  } else if (input.routerPollsExpected && servers.every((s) => s.routerPollsTotal === 0)) {
    causes.push('the router never polled the relay for events');
    restore.push("a finish_request that polls (the orchestrator's own session; newer router.py)");
  }
  const sizes = workerBlockSizes(input);
  const tpb = input.router.blockSize?.tokens ?? null;
  if (
    skipped.length === 0 &&
    tpb !== null &&
    input.router.blockSize?.basis !== 'inferred' &&
    sizes.length > 0 &&
    sizes.every((size) => size !== tpb)
  ) {
    causes.push(
      `the router chunks prompts by ${tpb} tokens, the workers store ${sizes.join('/')}-token blocks: no event hash can match`,
    );
    restore.push(`router_args.tokens_per_block: ${sizes[0]!}`);
  }
  return causes.length === 0 ? null : { causes, restore };
}
