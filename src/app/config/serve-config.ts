// Configuration of `kvsentinel serve`: a YAML or JSON file (its schema: config-schema.ts) plus flags (docs/design.md
// §7). Validated once, at the edge, into plain data; every error names the file and key path, or the flag, it came
// from. Flags add to the file's lists; a scalar flag overrides the file.
//
// Relay ports are the CTX data path and bind loopback unless a host is given: the recommended deployment runs the
// sidecar in the orchestrator's pod, where the router reaches them on 127.0.0.1; exposing them is a deliberate
// `@0.0.0.0:PORT` (docs/design.md §3).
import { readFile } from 'node:fs/promises';
import { fileErrorText } from '../../sources/file-error-text.js';
import type { ZmqBindSpec } from '../../sources/zmq/zmq-bind-source.js';
import type { ZmqStreamSpec } from '../../sources/zmq/zmq-events-source.js';
import { parseConfigDocument } from './config-document.js';
import { ConfigError } from './config-error.js';
import {
  DEFAULT_LISTEN,
  readConfigFile,
  WATCH_DEFAULTS,
  WATCH_FIELDS,
  REQUEST_LOG_FORMATS,
  routerProfile,
  type ConfigFile,
  type RelaySettings,
  type RequestLogFormat,
} from './config-schema.js';
import * as values from './config-values.js';
import { readAt, type HostPort } from './config-values.js';
import { renamed, type Renamed } from './schema-kit.js';
import { checkZmqBindUnique, parseZmqBindFlag } from './zmq-bind-config.js';
import { checkZmqUnique, parseZmqFlag } from './zmq-config.js';

export type { HostPort } from './config-values.js';

/** where a relay port binds when its listen address names no host */
export const DEFAULT_RELAY_HOST = '127.0.0.1';

export type CtxSpec = ConfigFile['ctx'][number];
export type RequestLogSpec = ConfigFile['requests'][number];
/** router facts the operator states (`router:`, --router.profile, --router.tokens-per-block) */
export interface RouterFacts {
  readonly type: NonNullable<ConfigFile['router']['type']> | null;
  readonly readsEvents: NonNullable<ConfigFile['router']['reads_events']> | null;
  readonly profile: NonNullable<ConfigFile['router']['profile']> | null;
  readonly tokensPerBlock: number | null;
  readonly maxBatchSize: number | null;
  readonly loadWeight: number | null;
  readonly trackRoutedBlocks: boolean | null;
  readonly backfillBlockHashesOnFinish: boolean | null;
}

export interface RelaySpec {
  readonly id: string;
  readonly upstream: string;
  /** null host: DEFAULT_RELAY_HOST (loopback); see relayHost() */
  readonly host: string | null;
  readonly port: number;
  /** more ports on the same host, one consumer (orchestrator replica) each: `ID=URL@9401,9411` */
  readonly replicaPorts: readonly number[];
}

/** The watch sources' cadence and bounds (pollIntervalMs, timeoutMs, …) come from WATCH_FIELDS. */
export interface ServeConfig extends Renamed<typeof WATCH_FIELDS> {
  readonly listen: HostPort;
  /** when set, /ws and POST /-/reload require `Authorization: Bearer <token>` (web.bearer_token_file) */
  readonly bearerToken: string | null;
  readonly relays: readonly RelaySpec[];
  /** the relay keys of the file (`relay:`) and --relay.max-request-bytes; read in config-schema.ts */
  readonly relay: RelaySettings;
  readonly state: {
    /** blocks per server in each of kvsentinel's two block tables (worker truth, router replica) */
    readonly maxTableBlocks: number;
  };
  readonly ctx: readonly CtxSpec[];
  /** ZMQ KV-event streams (TensorRT-LLM streaming publisher, vLLM, SGLang) */
  readonly zmq: readonly ZmqStreamSpec[];
  /** sockets kvsentinel binds for KV-event publishers that connect (`zmq_bind:`, --zmq-bind) */
  readonly zmqBind: readonly ZmqBindSpec[];
  readonly routerDebug: { readonly url: string; readonly intervalMs: number } | null;
  /** router facts the operator states (`router:`, --router.profile, --router.tokens-per-block) */
  readonly router: RouterFacts;
  /** each server's KV capacity in blocks as the operator states it (`kv_capacity_blocks:`, --kv-capacity ID=BLOCKS) */
  readonly kvCapacityBlocks: Readonly<Record<string, number>>;
  readonly orchestratorLog: string | null;
  readonly requestLogs: readonly RequestLogSpec[];
  /**
   * tokenizer.path: the model's tokenizer (a Hugging Face model folder or its tokenizer.json with
   * tokenizer_config.json): text and chat requests get the router-side ids the router hashes; null: none
   */
  readonly tokenizer: string | null;
}

/** Flags of `kvsentinel serve` as commander hands them over. */
export interface ServeFlags {
  readonly configFile?: string;
  readonly relay?: readonly string[];
  readonly ctx?: readonly string[];
  /** --zmq ID=ENDPOINT[,replay=…][,engine=…][,ranks=N][,topic=T][,hash=…][,seed=…][,hit=…] */
  readonly zmq?: readonly string[];
  /** --zmq-bind ENDPOINT[,engine=…][,ranks=N][,topic=T][,hash=…][,seed=…] */
  readonly zmqBind?: readonly string[];
  readonly events?: 'none' | 'exclusive';
  readonly routerDebug?: string;
  readonly requests?: readonly string[];
  readonly orchestratorLog?: string;
  readonly listenAddress?: string;
  readonly bearerTokenFile?: string;
  readonly maxTableBlocks?: string;
  /** --relay.max-request-bytes (overrides relay.max_request_bytes) */
  readonly relayMaxRequestBytes?: string;
  /** --router.profile and --router.tokens-per-block (override router.profile / router.tokens_per_block) */
  readonly routerProfile?: string;
  readonly routerTokensPerBlock?: string;
  /** --kv-capacity ID=BLOCKS (repeatable; overrides kv_capacity_blocks.ID) */
  readonly kvCapacity?: readonly string[];
  /** --tokenizer (overrides tokenizer.path) */
  readonly tokenizer?: string;
}

/** `--duration` and the like: a positive duration, named by the flag (or key) it came from. */
export function parseDuration(where: string, v: unknown): number {
  return readAt(where, values.durationMs, v);
}

/** `--web.listen-address` and the like; an empty host (`:9464`) is every interface unless `emptyHost` says otherwise. */
export function parseHostPort(where: string, v: unknown, emptyHost = '0.0.0.0'): HostPort {
  return readAt(where, values.hostPortOr(emptyHost), v);
}

/** `ID=URL@[HOST:]PORT[,PORT…]` (docs/design.md §7; one port per orchestrator replica). */
export function parseRelayFlag(text: string): RelaySpec {
  const where = `--relay '${text}'`;
  const eq = text.indexOf('=');
  const at = text.lastIndexOf('@');
  if (eq <= 0 || at < eq)
    throw new ConfigError(`${where}: expected ID=URL@[HOST:]PORT, e.g. ctx0=http://10.0.0.5:8001@9401`);
  const listen = readAt(where, values.relayListen, text.slice(at + 1));
  return {
    id: readAt(where, values.serverId, text.slice(0, eq)),
    upstream: readAt(where, values.httpUrl, text.slice(eq + 1, at)),
    ...listen,
  };
}

/** `ID=URL`. */
export function parseCtxFlag(text: string, events: 'none' | 'exclusive'): CtxSpec {
  const where = `--ctx '${text}'`;
  const eq = text.indexOf('=');
  if (eq <= 0) throw new ConfigError(`${where}: expected ID=URL, e.g. ctx0=http://10.0.0.5:8001`);
  return {
    id: readAt(where, values.serverId, text.slice(0, eq)),
    url: readAt(where, values.httpUrl, text.slice(eq + 1)),
    events,
    prometheus: false,
  };
}

function parseRequestLogFlag(text: string): RequestLogSpec {
  // FILE or FORMAT:FILE (e.g. perf-metrics:/var/log/perf.jsonl)
  const colon = text.indexOf(':');
  const prefix = colon > 0 ? text.slice(0, colon) : '';
  const where = `--requests '${text}'`;
  if ((REQUEST_LOG_FORMATS as readonly string[]).includes(prefix))
    return { path: readAt(where, values.filePath, text.slice(colon + 1)), format: prefix as RequestLogFormat };
  return { path: readAt(where, values.filePath, text), format: 'auto' };
}

function routerFacts(file: ConfigFile['router'], flags: ServeFlags): RouterFacts {
  return {
    type: file.type ?? null,
    readsEvents: file.reads_events ?? null,
    profile:
      flags.routerProfile !== undefined
        ? readAt('--router.profile', routerProfile, flags.routerProfile)
        : (file.profile ?? null),
    tokensPerBlock:
      flags.routerTokensPerBlock !== undefined
        ? readAt('--router.tokens-per-block', values.positiveIntText, flags.routerTokensPerBlock)
        : (file.tokens_per_block ?? null),
    maxBatchSize: file.max_batch_size ?? null,
    loadWeight: file.load_weight ?? null,
    trackRoutedBlocks: file.track_routed_blocks ?? null,
    backfillBlockHashesOnFinish: file.backfill_block_hashes_on_finish ?? null,
  };
}

/** `kv_capacity_blocks:` and --kv-capacity ID=BLOCKS, each value named by where it came from. */
function kvCapacityBlocks(file: ConfigFile['kv_capacity_blocks'], flags: readonly string[], source: string) {
  const out: Record<string, number> = {};
  for (const [id, blocks] of Object.entries(file)) {
    const where = `${source}: kv_capacity_blocks.${id}`;
    out[readAt(where, values.serverId, id)] = readAt(where, values.positiveIntText, blocks);
  }
  for (const text of flags) {
    const where = `--kv-capacity '${text}'`;
    const eq = text.indexOf('=');
    if (eq <= 0) throw new ConfigError(`${where}: expected ID=BLOCKS, e.g. ctx0=65536`);
    out[readAt(where, values.serverId, text.slice(0, eq))] = readAt(where, values.positiveIntText, text.slice(eq + 1));
  }
  return out;
}

/** Validates a parsed config document plus flags into a ServeConfig. `source` names the file in errors. */
export function buildConfig(doc: unknown, flags: ServeFlags, source = 'config'): ServeConfig {
  const file = readConfigFile(doc, source);
  const bearerToken =
    flags.bearerTokenFile !== undefined
      ? readAt('--web.bearer-token-file', values.bearerTokenFromFile, flags.bearerTokenFile)
      : (file.web.bearer_token_file ?? null);
  const listen =
    flags.listenAddress !== undefined
      ? parseHostPort('--web.listen-address', flags.listenAddress)
      : (file.web.listen_address ?? DEFAULT_LISTEN);
  const relays: RelaySpec[] = [
    ...file.relays.map((r) => ({ id: r.id, upstream: r.upstream, ...r.listen })),
    ...(flags.relay ?? []).map(parseRelayFlag),
  ];
  const ctx: CtxSpec[] = [...file.ctx, ...(flags.ctx ?? []).map((t) => parseCtxFlag(t, flags.events ?? 'none'))];
  if (flags.events === 'exclusive' && (flags.ctx ?? []).length === 0)
    throw new ConfigError('--events exclusive: needs at least one --ctx ID=URL to drain');
  const zmq = [...file.zmq, ...(flags.zmq ?? []).map(parseZmqFlag)];
  checkZmqUnique(zmq);
  const zmqBind = [...file.zmq_bind, ...(flags.zmqBind ?? []).map(parseZmqBindFlag)];
  checkZmqBindUnique(zmqBind);
  const debug = file.router_debug;
  let routerDebug: ServeConfig['routerDebug'] =
    debug === undefined ? null : { url: debug.url, intervalMs: debug.interval };
  if (flags.routerDebug !== undefined)
    routerDebug = {
      url: readAt('--router-debug', values.httpUrl, flags.routerDebug),
      intervalMs: debug?.interval ?? WATCH_DEFAULTS.routerDebugIntervalMs,
    };
  const r = file.relay;
  const config: ServeConfig = {
    listen,
    bearerToken,
    relays,
    relay:
      flags.relayMaxRequestBytes !== undefined
        ? { ...r, maxRequestBytes: readAt('--relay.max-request-bytes', values.sizeBytes, flags.relayMaxRequestBytes) }
        : r,
    state: {
      maxTableBlocks:
        flags.maxTableBlocks !== undefined
          ? readAt('--state.max-table-blocks', values.positiveIntText, flags.maxTableBlocks)
          : file.state.max_table_blocks,
    },
    ctx,
    zmq,
    zmqBind,
    routerDebug,
    router: routerFacts(file.router, flags),
    kvCapacityBlocks: kvCapacityBlocks(file.kv_capacity_blocks, flags.kvCapacity ?? [], source),
    orchestratorLog:
      flags.orchestratorLog !== undefined
        ? readAt('--orchestrator-log', values.filePath, flags.orchestratorLog)
        : (file.orchestrator_log ?? null),
    requestLogs: [...file.requests, ...(flags.requests ?? []).map(parseRequestLogFlag)],
    ...renamed(WATCH_FIELDS, file),
    tokenizer:
      flags.tokenizer !== undefined
        ? readAt('--tokenizer', values.filePath, flags.tokenizer)
        : (file.tokenizer?.path ?? null),
  };
  checkUnique(config);
  return config;
}

function checkUnique(config: ServeConfig): void {
  const fail = (where: string, message: string): never => {
    throw new ConfigError(`${where}: ${message}`);
  };
  const ids = new Map<string, string>();
  for (const [kind, id] of [
    ...config.relays.map((r) => ['relay', r.id] as const),
    ...config.ctx.map((c) => ['ctx', c.id] as const),
  ]) {
    const before = ids.get(id);
    if (before !== undefined) fail(`${kind} ${id}`, `server id '${id}' is used twice (also a ${before})`);
    ids.set(id, kind);
  }
  const ports = new Map<string, string>();
  for (const r of config.relays) {
    for (const port of [r.port, ...r.replicaPorts]) {
      if (port === 0) continue;
      const key = `${relayHost(r)}:${port}`;
      const before = ports.get(key);
      if (before !== undefined) fail(`relay ${r.id}`, `listen address ${key} is also used by relay ${before}`);
      if (port === config.listen.port && sameInterface(relayHost(r), config.listen.host))
        fail(`relay ${r.id}`, `port ${port} is the web listen port`);
      ports.set(key, r.id);
    }
  }
}

/** The host a relay port binds. */
export function relayHost(r: RelaySpec): string {
  return r.host ?? DEFAULT_RELAY_HOST;
}

/** whether two listen hosts can collide on one port (a wildcard address covers every interface) */
function sameInterface(a: string, b: string): boolean {
  const wildcard = (h: string): boolean => h === '0.0.0.0' || h === '::' || h === '';
  return a === b || wildcard(a) || wildcard(b);
}

/** Reads and validates the file (if any) and the flags. */
export async function loadConfig(flags: ServeFlags): Promise<ServeConfig> {
  if (flags.configFile === undefined) return buildConfig(undefined, flags);
  let text: string;
  try {
    text = await readFile(flags.configFile, 'utf8');
  } catch (err) {
    throw new ConfigError(`--config.file ${flags.configFile}: cannot read it: ${fileErrorText(err)}`, {
      code: 'config-invalid',
    });
  }
  return buildConfig(parseConfigDocument(flags.configFile, text), flags, flags.configFile);
}
