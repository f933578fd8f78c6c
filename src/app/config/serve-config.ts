// Configuration of `kvsentinel serve`: a YAML or JSON file plus flags (docs/design.md §7). Validated once, at the edge,
// into plain data; every error names the key (file) or the flag it came from. Flags add to the file's lists; a
// scalar flag overrides the file.
//
// Default listen address 0.0.0.0:9464: Prometheus scrapes the sidecar from outside its pod (the pod IP); 9464 is the
// port the deployment manifests and dashboards use. Relay ports are the CTX data path and bind loopback unless a
// host is given: the recommended deployment runs the sidecar in the orchestrator's pod, where the router reaches
// them on 127.0.0.1; exposing them is a deliberate `@0.0.0.0:PORT` (docs/design.md §3).
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parseRouterFacts, ROUTER_FACT_KEYS, type RouterFacts } from './router-facts-config.js';
import { fileErrorText } from '../../sources/file-error-text.js';
import { closestName } from '../../core/closest-name.js';
import { parse as parseYaml } from 'yaml';
import { DEFAULT_MAX_TABLE_BLOCKS_PER_SERVER } from '../../core/tables/index.js';
import type { ZmqStreamSpec } from '../../sources/zmq/zmq-events-source.js';
import { checkZmqUnique, parseZmqFlag, parseZmqList } from './zmq-config.js';
import { ConfigError } from './config-error.js';

export { ConfigError };

export const DEFAULT_LISTEN = { host: '0.0.0.0', port: 9464 } as const;
/** where a relay port binds when its listen address names no host */
export const DEFAULT_RELAY_HOST = '127.0.0.1';

export const REQUEST_LOG_FORMATS = ['auto', 'canonical', 'perf-metrics', 'openai', 'relay'] as const;
export type RequestLogFormat = (typeof REQUEST_LOG_FORMATS)[number];

export interface HostPort {
  readonly host: string;
  readonly port: number;
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

export interface CtxSpec {
  readonly id: string;
  readonly url: string;
  readonly events: 'none' | 'exclusive';
  readonly prometheus: boolean;
}

export interface RequestLogSpec {
  readonly path: string;
  readonly format: RequestLogFormat;
}

export interface ServeConfig {
  readonly listen: HostPort;
  /** when set, /ws and POST /-/reload require `Authorization: Bearer <token>` (web.bearer_token_file) */
  readonly bearerToken: string | null;
  readonly relays: readonly RelaySpec[];
  readonly relay: {
    readonly drainIntervalMs: number;
    readonly drainTimeoutMs: number;
    readonly maxDrainBytes: number;
    readonly consumerHeader: string;
    readonly captureMaxBytes: number;
    /** largest proxied request body; larger ones are answered 413 */
    readonly maxRequestBytes: number;
    readonly bufferMaxEvents: number;
    readonly bufferMaxBytes: number;
    /** a consumer silent this long is forgotten */
    readonly consumerIdleMs: number;
    /** events every consumer has read stay this long for replicas that join later */
    readonly retainReadMs: number;
    /** consumers (router replicas) known at once per relay; the longest silent is forgotten past it */
    readonly maxConsumers: number;
    readonly proxyTimeoutMs: number;
    /** idle upstream connections are closed after this, below the worker's own 5 s keep-alive */
    readonly upstreamKeepAliveMs: number;
    readonly shutdownGraceMs: number;
  };
  readonly state: {
    /** blocks per server in each of kvsentinel's two block tables (worker truth, router replica) */
    readonly maxTableBlocks: number;
  };
  readonly ctx: readonly CtxSpec[];
  /** ZMQ KV-event streams (TensorRT-LLM streaming publisher, vLLM, SGLang) */
  readonly zmq: readonly ZmqStreamSpec[];
  readonly routerDebug: { readonly url: string; readonly intervalMs: number } | null;
  /** router facts the operator states (`router:`, --router.profile, --router.tokens-per-block) */
  readonly router: RouterFacts;
  readonly orchestratorLog: string | null;
  readonly requestLogs: readonly RequestLogSpec[];
  readonly pollIntervalMs: number;
  readonly serverInfoIntervalMs: number;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  readonly followIntervalMs: number;
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
  /** --zmq ID=ENDPOINT[,replay=…][,engine=…][,ranks=N][,topic=T][,hash=…][,seed=…] */
  readonly zmq?: readonly string[];
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
  /** --tokenizer (overrides tokenizer.path) */
  readonly tokenizer?: string;
}


const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const BYTES = /^(\d+)(B|KiB|MiB|GiB)?$/;
const UNIT_BYTES: Record<string, number> = { B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 };
const ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

function fail(where: string, message: string): never {
  throw new ConfigError(`${where}: ${message}`);
}

function describe(v: unknown): string {
  return typeof v === 'string' ? `'${v}'` : JSON.stringify(v) ?? String(v);
}

export function parseDuration(where: string, v: unknown): number {
  if (typeof v === 'number' && Number.isFinite(v) && v > 0) return v;
  if (typeof v === 'string') {
    const m = DURATION.exec(v.trim());
    if (m !== null) {
      const ms = Number(m[1]) * (UNIT_MS[m[2] as string] as number);
      if (ms > 0) return ms;
    }
  }
  return fail(where, `${describe(v)} is not a positive duration (e.g. 250ms, 5s, 1m; a number means ms)`);
}

function parseBytes(where: string, v: unknown): number {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v > 0) return v;
  if (typeof v === 'string') {
    const m = BYTES.exec(v.trim());
    if (m !== null) {
      const n = Number(m[1]) * (UNIT_BYTES[m[2] ?? 'B'] as number);
      if (n > 0 && Number.isSafeInteger(n)) return n;
    }
  }
  return fail(where, `${describe(v)} is not a positive size (e.g. 1048576, 64MiB)`);
}

function parsePositiveInt(where: string, v: unknown): number {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v > 0) return v;
  return fail(where, `${describe(v)} is not a positive integer`);
}

function parseHttpUrl(where: string, v: unknown): string {
  if (typeof v === 'string') {
    try {
      const u = new URL(v);
      if ((u.protocol === 'http:' || u.protocol === 'https:') && u.search === '' && u.hash === '') return v.replace(/\/+$/, '');
    } catch {
      // fall through
    }
  }
  return fail(where, `${describe(v)} is not an http(s) URL without query`);
}

function parseId(where: string, v: unknown): string {
  if (typeof v === 'string' && ID.test(v)) return v;
  return fail(where, `${describe(v)} is not a server id (letters, digits, '_', '.', '-'; at most 64)`);
}

function parsePort(where: string, text: string): number {
  if (/^\d+$/.test(text)) {
    const p = Number(text);
    if (p >= 0 && p <= 65535) return p;
  }
  return fail(where, `'${text}' is not a port (0-65535)`);
}

/** `HOST:PORT`, `[v6]:PORT` or `:PORT` (all interfaces). */
export function parseHostPort(where: string, v: unknown): HostPort {
  if (typeof v !== 'string') return fail(where, `${describe(v)} is not HOST:PORT`);
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(v.trim());
  if (m === null) return fail(where, `'${v}' is not HOST:PORT`);
  const host = m[1] ?? m[2] ?? '';
  return { host: host === '' ? '0.0.0.0' : host, port: parsePort(where, m[3] as string) };
}

/**
 * `[HOST:]PORT[,PORT…]` of a relay's listeners (or a YAML list of ports): one port per consumer, i.e. per
 * orchestrator replica; null host means the main listen host.
 */
function parseRelayListen(where: string, v: unknown): { host: string | null; port: number; replicaPorts: number[] } {
  const parts = Array.isArray(v) ? v : typeof v === 'string' ? v.split(',') : [v];
  if (parts.length === 0) return fail(where, 'expected [HOST:]PORT[,PORT…]');
  const [first, ...rest] = parts as unknown[];
  const replicaPorts = rest.map((p) => parsePort(where, String(p).trim()));
  const head = typeof first === 'string' ? first.trim() : first;
  const listen = typeof head === 'number' || (typeof head === 'string' && /^\d+$/.test(head)) ? { host: null, port: parsePort(where, String(head)) } : parseHostPort(where, head);
  return { ...listen, replicaPorts };
}

/** `ID=URL@[HOST:]PORT[,PORT…]` (docs/design.md §7; one port per orchestrator replica). */
export function parseRelayFlag(text: string): RelaySpec {
  const where = `--relay '${text}'`;
  const eq = text.indexOf('=');
  const at = text.lastIndexOf('@');
  if (eq <= 0 || at < eq) return fail(where, 'expected ID=URL@[HOST:]PORT, e.g. ctx0=http://10.0.0.5:8001@9401');
  const listen = parseRelayListen(where, text.slice(at + 1));
  return { id: parseId(where, text.slice(0, eq)), upstream: parseHttpUrl(where, text.slice(eq + 1, at)), ...listen };
}

/** `ID=URL`. */
export function parseCtxFlag(text: string, events: 'none' | 'exclusive'): CtxSpec {
  const where = `--ctx '${text}'`;
  const eq = text.indexOf('=');
  if (eq <= 0) return fail(where, 'expected ID=URL, e.g. ctx0=http://10.0.0.5:8001');
  return { id: parseId(where, text.slice(0, eq)), url: parseHttpUrl(where, text.slice(eq + 1)), events, prometheus: false };
}

function parseRequestLogFlag(text: string): RequestLogSpec {
  // FILE or FORMAT:FILE (e.g. perf-metrics:/var/log/perf.jsonl)
  const colon = text.indexOf(':');
  const prefix = colon > 0 ? text.slice(0, colon) : '';
  if ((REQUEST_LOG_FORMATS as readonly string[]).includes(prefix)) return { path: text.slice(colon + 1), format: prefix as RequestLogFormat };
  return { path: text, format: 'auto' };
}

type Raw = Record<string, unknown>;

function isRaw(v: unknown): v is Raw {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function checkKeys(where: string, obj: Raw, allowed: readonly string[]): void {
  for (const key of Object.keys(obj)) {
    if (allowed.includes(key)) continue;
    const near = closestName(key, allowed);
    fail(`${where === '' ? '' : `${where}.`}${key}`, `unknown key${near !== null ? ` (did you mean ${near}?)` : ''}; expected one of ${allowed.join(', ')}`);
  }
}

function asList(where: string, v: unknown): unknown[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v;
  return fail(where, 'expected a list');
}

const TOP_KEYS = ['web', 'relays', 'relay', 'state', 'ctx', 'zmq', 'router', 'router_debug', 'orchestrator_log', 'requests', 'tokenizer', 'poll_interval', 'server_info_interval', 'timeout', 'max_response_bytes', 'follow_interval'] as const;
const RELAY_KEYS = [
  'drain_interval',
  'drain_timeout',
  'max_drain_bytes',
  'consumer_header',
  'consumer_by',
  'consumer_idle',
  'retain_read',
  'capture_max_bytes',
  'max_request_bytes',
  'buffer_max_events',
  'buffer_max_bytes',
  'max_consumers',
  'proxy_timeout',
  'upstream_keep_alive',
  'shutdown_grace',
] as const;

/** The token is the file's first line; an unreadable or empty file is a configuration error naming the key. */
function readBearerToken(where: string, v: unknown): string {
  if (typeof v !== 'string' || v === '') return fail(where, `${describe(v)} is not a file path`);
  let text: string;
  try {
    text = readFileSync(v, 'utf8');
  } catch (err) {
    return fail(where, `cannot read ${v}: ${fileErrorText(err)}`);
  }
  const token = (text.split(/\r?\n/)[0] ?? '').trim();
  if (token.length < 16) fail(where, `${v}: the token must be at least 16 characters on the first line`);
  return token;
}

/** Validates a parsed config document plus flags into a ServeConfig. `source` names the file in errors. */
export function buildConfig(doc: unknown, flags: ServeFlags, source = 'config'): ServeConfig {
  const file: Raw = doc === undefined || doc === null ? {} : isRaw(doc) ? doc : fail(source, 'expected a mapping at the top level');
  checkKeys('', file, TOP_KEYS);
  const at = (key: string): string => `${source}: ${key}`;

  const web = file['web'] === undefined ? {} : isRaw(file['web']) ? file['web'] : fail(at('web'), 'expected a mapping');
  checkKeys(at('web'), web, ['listen_address', 'bearer_token_file']);
  const tokenFile = flags.bearerTokenFile !== undefined ? { where: '--web.bearer-token-file', v: flags.bearerTokenFile as unknown } : web['bearer_token_file'] !== undefined ? { where: at('web.bearer_token_file'), v: web['bearer_token_file'] } : null;
  const bearerToken = tokenFile === null ? null : readBearerToken(tokenFile.where, tokenFile.v);
  const listen =
    flags.listenAddress !== undefined
      ? parseHostPort('--web.listen-address', flags.listenAddress)
      : web['listen_address'] !== undefined
        ? parseHostPort(at('web.listen_address'), web['listen_address'])
        : DEFAULT_LISTEN;

  const relays: RelaySpec[] = asList(at('relays'), file['relays']).map((r, i) => {
    const where = at(`relays[${i}]`);
    if (!isRaw(r)) return fail(where, 'expected a mapping with id, upstream, listen');
    checkKeys(where, r, ['id', 'upstream', 'listen']);
    if (r['listen'] === undefined) fail(`${where}.listen`, 'missing ([HOST:]PORT)');
    return { id: parseId(`${where}.id`, r['id']), upstream: parseHttpUrl(`${where}.upstream`, r['upstream']), ...parseRelayListen(`${where}.listen`, r['listen']) };
  });
  relays.push(...(flags.relay ?? []).map(parseRelayFlag));

  const relayRaw = file['relay'] === undefined ? {} : isRaw(file['relay']) ? file['relay'] : fail(at('relay'), 'expected a mapping');
  checkKeys(at('relay'), relayRaw, RELAY_KEYS);
  const opt = <T>(key: string, parse: (where: string, v: unknown) => T, dflt: T): T => (relayRaw[key] === undefined ? dflt : parse(at(`relay.${key}`), relayRaw[key]));
  if (relayRaw['consumer_by'] !== undefined) {
    fail(
      at('relay.consumer_by'),
      'was removed: it told router replicas apart by remote address (two replicas on one host merged) or address and port (a client reconnecting from a new port got events twice); ' +
        'give each replica its own relay port instead, e.g. --relay ctx0=http://10.0.0.5:8001@9401,9411 (listen: "9401,9411")',
    );
  }
  const consumerHeader = opt('consumer_header', (w, v) => (typeof v === 'string' && /^[A-Za-z0-9-]*$/.test(v) ? v.toLowerCase() : fail(w, `${describe(v)} is not a header name`)), 'x-kvsentinel-consumer');

  const ctx: CtxSpec[] = asList(at('ctx'), file['ctx']).map((c, i) => {
    const where = at(`ctx[${i}]`);
    if (!isRaw(c)) return fail(where, 'expected a mapping with id, url');
    checkKeys(where, c, ['id', 'url', 'events', 'prometheus']);
    const events = c['events'] ?? 'none';
    if (events !== 'none' && events !== 'exclusive') fail(`${where}.events`, `${describe(events)} is not none or exclusive`);
    const prometheus = c['prometheus'] ?? false;
    if (typeof prometheus !== 'boolean') fail(`${where}.prometheus`, `${describe(prometheus)} is not true or false`);
    return { id: parseId(`${where}.id`, c['id']), url: parseHttpUrl(`${where}.url`, c['url']), events: events, prometheus };
  });
  ctx.push(...(flags.ctx ?? []).map((t) => parseCtxFlag(t, flags.events ?? 'none')));
  if (flags.events === 'exclusive' && (flags.ctx ?? []).length === 0) fail('--events exclusive', 'needs at least one --ctx ID=URL to drain');

  const zmq = [...parseZmqList(at('zmq'), asList(at('zmq'), file['zmq'])), ...(flags.zmq ?? []).map(parseZmqFlag)];
  checkZmqUnique(zmq);

  let routerDebug: ServeConfig['routerDebug'] = null;
  if (file['router_debug'] !== undefined) {
    const rd = file['router_debug'];
    const where = at('router_debug');
    const obj: Raw = typeof rd === 'string' ? { url: rd } : isRaw(rd) ? rd : fail(where, 'expected a URL or a mapping with url, interval');
    checkKeys(where, obj, ['url', 'interval']);
    routerDebug = { url: parseHttpUrl(`${where}.url`, obj['url']), intervalMs: obj['interval'] === undefined ? 1_000 : parseDuration(`${where}.interval`, obj['interval']) };
  }
  if (flags.routerDebug !== undefined) routerDebug = { url: parseHttpUrl('--router-debug', flags.routerDebug), intervalMs: routerDebug?.intervalMs ?? 1_000 };

  const routerRaw = file['router'] === undefined || file['router'] === null ? {} : isRaw(file['router']) ? file['router'] : fail(at('router'), 'expected a mapping');
  checkKeys(at('router'), routerRaw, ROUTER_FACT_KEYS);
  const router = parseRouterFacts(routerRaw, flags, at, fail);

  const pathOf = (where: string, v: unknown): string => (typeof v === 'string' && v !== '' ? v : fail(where, `${describe(v)} is not a file path`));
  let orchestratorLog = file['orchestrator_log'] === undefined ? null : pathOf(at('orchestrator_log'), file['orchestrator_log']);
  if (flags.orchestratorLog !== undefined) orchestratorLog = flags.orchestratorLog;

  let tokenizer: string | null = null;
  if (file['tokenizer'] !== undefined && file['tokenizer'] !== null) {
    const t = file['tokenizer'];
    const obj: Raw = typeof t === 'string' ? { path: t } : isRaw(t) ? t : fail(at('tokenizer'), 'expected a path or a mapping with path');
    checkKeys(at('tokenizer'), obj, ['path']);
    tokenizer = pathOf(at('tokenizer.path'), obj['path']);
  }
  if (flags.tokenizer !== undefined) tokenizer = pathOf('--tokenizer', flags.tokenizer);

  const requestLogs: RequestLogSpec[] = asList(at('requests'), typeof file['requests'] === 'string' ? [file['requests']] : file['requests']).map((r, i) => {
    const where = at(`requests[${i}]`);
    if (typeof r === 'string') return { path: pathOf(where, r), format: 'auto' as const };
    if (!isRaw(r)) return fail(where, 'expected a path or a mapping with path, format');
    checkKeys(where, r, ['path', 'format']);
    const format = r['format'] ?? 'auto';
    if (!(REQUEST_LOG_FORMATS as readonly unknown[]).includes(format)) fail(`${where}.format`, `${describe(format)} is not one of ${REQUEST_LOG_FORMATS.join(', ')}`);
    return { path: pathOf(`${where}.path`, r['path']), format: format as RequestLogFormat };
  });
  requestLogs.push(...(flags.requests ?? []).map(parseRequestLogFlag));

  const top = <T>(key: string, parse: (where: string, v: unknown) => T, dflt: T): T => (file[key] === undefined ? dflt : parse(at(key), file[key]));
  const stateRaw = file['state'] === undefined ? {} : isRaw(file['state']) ? file['state'] : fail(at('state'), 'expected a mapping');
  checkKeys(at('state'), stateRaw, ['max_table_blocks']);
  const maxTableBlocks =
    flags.maxTableBlocks !== undefined
      ? parsePositiveInt('--state.max-table-blocks', /^\d+$/.test(flags.maxTableBlocks) ? Number(flags.maxTableBlocks) : flags.maxTableBlocks)
      : stateRaw['max_table_blocks'] === undefined
        ? DEFAULT_MAX_TABLE_BLOCKS_PER_SERVER
        : parsePositiveInt(at('state.max_table_blocks'), stateRaw['max_table_blocks']);
  const config: ServeConfig = {
    listen,
    bearerToken,
    relays,
    relay: {
      drainIntervalMs: opt('drain_interval', parseDuration, 250),
      drainTimeoutMs: opt('drain_timeout', parseDuration, 5_000),
      maxDrainBytes: opt('max_drain_bytes', parseBytes, 64 * 1024 ** 2),
      consumerHeader,
      captureMaxBytes: opt('capture_max_bytes', parseBytes, 16 * 1024 ** 2),
      maxRequestBytes:
        flags.relayMaxRequestBytes !== undefined ? parseBytes('--relay.max-request-bytes', flags.relayMaxRequestBytes) : opt('max_request_bytes', parseBytes, 64 * 1024 ** 2),
      bufferMaxEvents: opt('buffer_max_events', parsePositiveInt, 200_000),
      bufferMaxBytes: opt('buffer_max_bytes', parseBytes, 64 * 1024 ** 2),
      consumerIdleMs: opt('consumer_idle', parseDuration, 3_600_000),
      retainReadMs: opt('retain_read', (w, v) => (v === 0 || v === '0' ? 0 : parseDuration(w, v)), 10_000),
      maxConsumers: opt('max_consumers', parsePositiveInt, 64),
      proxyTimeoutMs: opt('proxy_timeout', parseDuration, 600_000),
      upstreamKeepAliveMs: opt('upstream_keep_alive', (w, v) => {
        const ms = parseDuration(w, v);
        return ms > 0 ? ms : fail(w, 'must be above 0 (and below the workers\' keep-alive timeout, 5 s for trtllm-serve)');
      }, 4_000),
      shutdownGraceMs: opt('shutdown_grace', parseDuration, 30_000),
    },
    state: { maxTableBlocks },
    ctx,
    zmq,
    routerDebug,
    router,
    orchestratorLog,
    requestLogs,
    pollIntervalMs: top('poll_interval', parseDuration, 1_000),
    serverInfoIntervalMs: top('server_info_interval', parseDuration, 30_000),
    timeoutMs: top('timeout', parseDuration, 5_000),
    maxResponseBytes: top('max_response_bytes', parseBytes, 16 * 1024 ** 2),
    followIntervalMs: top('follow_interval', parseDuration, 500),
    tokenizer,
  };
  checkUnique(config);
  return config;
}

function checkUnique(config: ServeConfig): void {
  const ids = new Map<string, string>();
  for (const [kind, id] of [...config.relays.map((r) => ['relay', r.id] as const), ...config.ctx.map((c) => ['ctx', c.id] as const)]) {
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
      if (port === config.listen.port && sameInterface(relayHost(r), config.listen.host)) fail(`relay ${r.id}`, `port ${port} is the web listen port`);
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
    throw new ConfigError(`--config.file ${flags.configFile}: cannot read it: ${fileErrorText(err)}`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text, { prettyErrors: true });
  } catch (err) {
    throw new ConfigError(`${flags.configFile}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  }
  return buildConfig(doc, flags, flags.configFile);
}
