// Lines of the TensorRT-LLM disaggregated orchestrator's log that reveal router configuration and event polling
// (docs/trtllm-wire.md §1.4, §5): `BlockHashMixin: tokens_per_block=N`, router class names, `max_batch_size`,
// `backfill_block_hashes_on_finish`, `<server> is ready with info: {...}` and
// `Failed to poll KV cache events from <server>: <error>`, and the newest router's `(auto, adopts worker)`,
// `router tokens_per_block unset: adopting worker's N on <server>`, `tokens_per_block mismatch on <server>: …
// skipping event polling` and `EVENT_MATCH_DIAG` lines. Other lines are ignored.
import type { Observation, RouterProfile } from '../observe/observation.js';
import { isHashAlgo } from '../wire/kv-event.js';
import type { ServerResolver } from './server-resolver.js';
import { orchestratorLogMessage } from './trtllm-log-line.js';

const TPB = /BlockHashMixin: tokens_per_block=(\d+)( \(auto, adopts worker\))?/;
// the newest router.py (docs/trtllm-wire.md §5): the worker's size adopted per server, polling skipped on a mismatch
const ADOPT = /router tokens_per_block unset: adopting worker's (\d+) on (\S+)/;
const TPB_MISMATCH = /tokens_per_block mismatch on (\S+?): router=(\d+) worker=(\d+)(\.? are not divisible)?/;
const EVENT_MATCH_DIAG =
  /EVENT_MATCH_DIAG server=(\S+) total_match=(\d+) event_match=(\d+) event_blocks=(\d+) total_blocks=(\d+)/;
const MAX_BATCH = /\bmax_batch_size['"]?\s*[=:]\s*(\d+)/;
const BACKFILL = /\bbackfill_block_hashes_on_finish['"]?\s*[=:]\s*(True|False|true|false)/;
const ROUTER_CLASS = /\b(KvCacheAwareRouter|ConversationRouter|RoundRobinRouter|LoadBalancingRouter)\b/;
const ROUTER_TYPE_KEY =
  /\b(?:router_)?type['"]?\s*[=:]\s*['"]?(kv_cache_aware|conversation|round_robin|load_balancing)\b/;
const POLL_FAIL = /Failed to poll KV cache events from (\S+?):(?:\s(.*))?$/;
// stock: "server is ready with info: {...}" (no server named); variants name it before "server" or instead of it
const READY = /(?:^|\s)(?:(\S+) )?(\S+) is ready with info: (.*)$/;
const INFO_ALGO = /['"]kv_cache_hash_algo['"]\s*:\s*['"]([a-z0-9_]+)['"]/;
const INFO_TPB = /['"]tokens_per_block['"]\s*:\s*(\d+)/;

const ROUTER_TYPES: Record<string, string> = {
  KvCacheAwareRouter: 'kv_cache_aware',
  ConversationRouter: 'conversation',
  RoundRobinRouter: 'round_robin',
  LoadBalancingRouter: 'load_balancing',
};

interface LoggedRouterFields {
  routerType?: string;
  tokensPerBlock?: number;
  /** tokensPerBlock is a worker's the router adopted */
  adopted?: boolean;
  maxBatchSize?: number;
  backfill?: boolean;
  profile?: RouterProfile;
}

function routerConfig(ts: number, fields: LoggedRouterFields): Observation {
  return {
    kind: 'router-config',
    ts,
    source: 'orchestrator-log',
    routerType: fields.routerType ?? null,
    tokensPerBlock: fields.tokensPerBlock ?? null,
    ...(fields.adopted === true ? { tokensPerBlockAdopted: true } : {}),
    maxBatchSize: fields.maxBatchSize ?? null,
    backfillBlockHashesOnFinish: fields.backfill ?? null,
    servers: null,
    ...(fields.profile !== undefined ? { profile: fields.profile } : {}),
  };
}

/** Lines only the newest router.py writes; null when the line is none of them. */
function newestRouterLine(line: string, ts: number, resolve: ServerResolver): Observation[] | null {
  const adopt = ADOPT.exec(line);
  if (adopt !== null) {
    // the worker's size replaces the 32 of the earlier "BlockHashMixin: tokens_per_block=32 (auto, adopts worker)"
    const tpb = Number(adopt[1]);
    return [
      routerConfig(ts, { tokensPerBlock: tpb, adopted: true, profile: 'newest' }),
      { kind: 'server-info', ts, server: resolve(adopt[2] as string), hashAlgo: null, tokensPerBlock: tpb },
    ];
  }
  const mismatch = TPB_MISMATCH.exec(line);
  if (mismatch !== null) {
    const server = resolve(mismatch[1] as string);
    const router = Number(mismatch[2]);
    const worker = Number(mismatch[3]);
    return [
      routerConfig(ts, { tokensPerBlock: router, profile: 'newest' }),
      { kind: 'server-info', ts, server, hashAlgo: null, tokensPerBlock: worker },
      {
        kind: 'router-server-fact',
        ts,
        server,
        fact: 'polling-skipped',
        routerTokensPerBlock: router,
        workerTokensPerBlock: worker,
        divisible: mismatch[4] === undefined,
      },
    ];
  }
  const diag = EVENT_MATCH_DIAG.exec(line);
  if (diag !== null) {
    // query_hashes (prompt-derived) are never read
    return [
      routerConfig(ts, { profile: 'newest' }),
      {
        kind: 'router-server-fact',
        ts,
        server: resolve(diag[1] as string),
        fact: 'event-match',
        totalMatch: Number(diag[2]),
        eventMatch: Number(diag[3]),
        eventBlocks: Number(diag[4]),
        totalBlocks: Number(diag[5]),
      },
    ];
  }
  return null;
}

// a host (name, IPv4, [IPv6]) with an optional port, or a URL, or a sidecar id: never `]`, `[serve`, `server`
const SERVER_NAME =
  /^(?:[a-z][a-z0-9+.-]*:\/\/)?(?:\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9_.-]*[a-z0-9])?)(?::\d{1,5})?(?:\/[^\s]*)?$/i;

/** Whether a token the log puts where a server goes can name one. */
export function isServerName(name: string): boolean {
  return SERVER_NAME.test(name);
}

/** Observations one log line yields (usually none). */
export function parseOrchestratorLogLine(rawLine: string, ts: number, resolveName: ServerResolver): Observation[] {
  const out: Observation[] = [];
  const line = orchestratorLogMessage(rawLine);
  let named = true;
  const resolve: ServerResolver = (name) => {
    if (!isServerName(name)) named = false;
    return resolveName(name);
  };
  const checked = (obs: Observation[]): Observation[] => (named ? obs : obs.filter((o) => !('server' in o)));
  const poll = POLL_FAIL.exec(line);
  if (poll !== null) {
    // the router logs an empty message for timeouts
    out.push({
      kind: 'poll-failure',
      ts,
      server: resolve(poll[1] as string),
      message: (poll[2] ?? '').trim() || 'timeout (empty error)',
    });
    return checked(out);
  }
  const ready = READY.exec(line);
  if (ready !== null) {
    const before = ready[1];
    const subject = ready[2] as string;
    const who = subject === 'server' ? (before !== undefined && !before.startsWith('[') ? before : null) : subject;
    const info = ready[3] as string;
    const algo = INFO_ALGO.exec(info)?.[1];
    const tpb = INFO_TPB.exec(info)?.[1];
    // the stock line starts "server is ready…" and names no server: only a line that names one is attributable
    if (who !== null)
      out.push({
        kind: 'server-info',
        ts,
        server: resolve(who),
        hashAlgo: isHashAlgo(algo) ? algo : null,
        tokensPerBlock: tpb !== undefined ? Number(tpb) : null,
      });
    return checked(out);
  }
  const newest = newestRouterLine(line, ts, resolve);
  if (newest !== null) return checked(newest);
  const fields: LoggedRouterFields = {};
  const tpb = TPB.exec(line);
  // "(auto, adopts worker)": 32 is a placeholder until the worker's size is adopted — not the router's size
  if (tpb !== null && tpb[2] !== undefined) fields.profile = 'newest';
  else if (tpb !== null) fields.tokensPerBlock = Number(tpb[1]);
  const mbs = MAX_BATCH.exec(line);
  if (mbs !== null) fields.maxBatchSize = Number(mbs[1]);
  const backfill = BACKFILL.exec(line);
  if (backfill !== null) fields.backfill = (backfill[1] as string).toLowerCase() === 'true';
  const cls = ROUTER_CLASS.exec(line);
  if (cls !== null) fields.routerType = ROUTER_TYPES[cls[1] as string] as string;
  const typed = ROUTER_TYPE_KEY.exec(line);
  if (typed !== null) fields.routerType = typed[1] as string;
  if (Object.keys(fields).length > 0) out.push(routerConfig(ts, fields));
  return checked(out);
}
