// The serve configuration file as one zod schema: its keys, their nesting, their grammars (config-values.ts) and
// their defaults, which the modules they configure own (the relay's, its event buffer's, the block tables').
// Every mapping is strict: an unknown key is an error naming its path, with the closest known key.
import { z } from 'zod';
import { ROUTER_EVENT_READS, ROUTER_PROFILES, ROUTER_TYPE_NAMES } from '../../core/observe/observation.js';
import { DEFAULT_EVENT_BUFFER_OPTIONS } from '../../core/relay/event-buffer.js';
import { DEFAULT_RETAIN_READ_BYTES } from '../../core/relay/read-retention.js';
import { DEFAULT_MAX_TABLE_BLOCKS_PER_SERVER } from '../../core/tables/index.js';
import { DEFAULT_RELAY_OPTIONS } from '../../sources/relay/relay-options.js';
import { ConfigError } from './config-error.js';
import * as values from './config-values.js';
import {
  field,
  fieldShape,
  list,
  mapping,
  pathText,
  renamed,
  required,
  section,
  shorthand,
  value,
} from './schema-kit.js';
import { zmqBindEntry } from './zmq-bind-config.js';
import { zmqEntry } from './zmq-config.js';

export const REQUEST_LOG_FORMATS = ['auto', 'canonical', 'perf-metrics', 'openai', 'relay'] as const;
export type RequestLogFormat = (typeof REQUEST_LOG_FORMATS)[number];

/** Default listen address: Prometheus scrapes the sidecar from outside its pod (the pod IP) on 9464. */
export const DEFAULT_LISTEN = { host: '0.0.0.0', port: 9464 } as const;

/** The watch sources' read cadence and bounds (the daemon hands them to every poller and follower). */
export const WATCH_DEFAULTS = {
  pollIntervalMs: 1_000,
  serverInfoIntervalMs: 30_000,
  timeoutMs: 5_000,
  maxResponseBytes: 16 * 1024 ** 2,
  followIntervalMs: 500,
  routerDebugIntervalMs: 1_000,
} as const;

// the watch sources' top-level keys and the fields of the configuration they set
export const WATCH_FIELDS = {
  poll_interval: field('pollIntervalMs', values.durationMs, WATCH_DEFAULTS.pollIntervalMs),
  server_info_interval: field('serverInfoIntervalMs', values.durationMs, WATCH_DEFAULTS.serverInfoIntervalMs),
  timeout: field('timeoutMs', values.durationMs, WATCH_DEFAULTS.timeoutMs),
  max_response_bytes: field('maxResponseBytes', values.sizeBytes, WATCH_DEFAULTS.maxResponseBytes),
  follow_interval: field('followIntervalMs', values.durationMs, WATCH_DEFAULTS.followIntervalMs),
} as const;

const buffer = DEFAULT_EVENT_BUFFER_OPTIONS;
const relayDefaults = DEFAULT_RELAY_OPTIONS;

// the relay's keys and the fields of its options (sources/relay/relay-options.ts) they set, each written once
const RELAY_FIELDS = {
  drain_interval: field('drainIntervalMs', values.durationMs, relayDefaults.drainIntervalMs),
  drain_timeout: field('drainTimeoutMs', values.durationMs, relayDefaults.drainTimeoutMs),
  max_drain_bytes: field('maxDrainBytes', values.sizeBytes, relayDefaults.maxDrainBytes),
  consumer_header: field(
    'consumerHeader',
    (v) =>
      typeof v === 'string' && /^[A-Za-z0-9-]*$/.test(v)
        ? v.toLowerCase()
        : values.problem(`${values.describe(v)} is not a header name`),
    relayDefaults.consumerHeader,
  ),
  capture_max_bytes: field('captureMaxBytes', values.sizeBytes, relayDefaults.captureMaxBytes),
  // the grammar --relay.max-request-bytes reads too
  max_request_bytes: field('maxRequestBytes', values.sizeBytes, relayDefaults.maxRequestBytes),
  proxy_timeout: field('proxyTimeoutMs', values.durationMs, relayDefaults.proxyTimeoutMs),
  // above 0 and below the workers' keep-alive timeout (5 s for trtllm-serve)
  upstream_keep_alive: field('upstreamKeepAliveMs', values.durationMs, relayDefaults.upstreamKeepAliveMs),
  shutdown_grace: field('shutdownGraceMs', values.durationMs, relayDefaults.shutdownGraceMs),
  // not a relay's own: every relay of the process shares it (core/relay/read-retention.ts)
  retain_read_bytes: field('retainReadBytes', values.sizeBytes, DEFAULT_RETAIN_READ_BYTES),
} as const;

// the relay's keys that bound its event buffer (core/relay/event-buffer.ts)
const RELAY_BUFFER_FIELDS = {
  consumer_idle: field('consumerIdleMs', values.durationMs, buffer.consumerIdleMs),
  retain_read: field('retainReadMs', values.durationOrZeroMs, buffer.retainReadMs),
  buffer_max_events: field('maxEvents', values.positiveInt, buffer.maxEvents),
  buffer_max_bytes: field('maxBytes', values.sizeBytes, buffer.maxBytes),
  max_consumers: field('maxConsumers', values.positiveInt, buffer.maxConsumers),
} as const;

const relaySection = mapping({
  ...fieldShape(RELAY_FIELDS),
  ...fieldShape(RELAY_BUFFER_FIELDS),
  consumer_by: value((): never =>
    values.problem(
      'was removed: it told router replicas apart by remote address (two replicas on one host merged) or address and port (a client reconnecting from a new port got events twice); ' +
        'give each replica its own relay port instead, e.g. --relay ctx0=http://10.0.0.5:8001@9401,9411 (listen: "9401,9411")',
    ),
  ),
}).transform((r) => ({ ...renamed(RELAY_FIELDS, r), buffer: renamed(RELAY_BUFFER_FIELDS, r) }));

/** The relay's settings the file (and its flags) give: its options but those the daemon decides per relay. */
export type RelaySettings = z.output<typeof relaySection>;

/** router.profile and --router.profile */
export const routerProfile = values.oneOf(ROUTER_PROFILES, (v) => JSON.stringify(v));

const routerSection = mapping({
  // the router's kind, so it is judged by what it is meant to do (docs/orchestrator-log.md, "router kinds")
  type: value(values.oneOf(ROUTER_TYPE_NAMES, (v) => JSON.stringify(v))),
  reads_events: value(values.oneOf(ROUTER_EVENT_READS, (v) => JSON.stringify(v))),
  profile: value(routerProfile),
  tokens_per_block: value(values.positiveIntText),
  max_batch_size: value(values.positiveIntText),
  load_weight: value((v) =>
    typeof v === 'number' && Number.isFinite(v) && v >= 0
      ? v
      : values.problem(`${JSON.stringify(v)} is not a non-negative number`),
  ),
  track_routed_blocks: value(values.bool),
  backfill_block_hashes_on_finish: value(values.bool),
});

const relayEntry = mapping(
  { id: required(values.serverId), upstream: required(values.httpUrl), listen: required(values.relayListen) },
  'expected a mapping with id, upstream, listen',
);

const ctxEntry = mapping(
  {
    id: required(values.serverId),
    url: required(values.httpUrl),
    events: value(
      (v) => (v === 'none' || v === 'exclusive' ? v : values.problem(`${values.describe(v)} is not none or exclusive`)),
      'none',
    ),
    prometheus: value(values.bool, false),
  },
  'expected a mapping with id, url',
);

const requestLogEntry = z.preprocess(
  (v) => (typeof v === 'string' ? { path: v } : v),
  mapping(
    { path: required(values.filePath), format: value(values.oneOf(REQUEST_LOG_FORMATS), 'auto') },
    'expected a path or a mapping with path, format',
  ),
);

export const configFileSchema = mapping(
  {
    web: section(
      mapping({ listen_address: value(values.hostPort), bearer_token_file: value(values.bearerTokenFromFile) }),
    ),
    relays: list(relayEntry),
    relay: section(relaySection),
    // the grammar --state.max-table-blocks reads too
    state: section(mapping({ max_table_blocks: value(values.positiveIntText, DEFAULT_MAX_TABLE_BLOCKS_PER_SERVER) })),
    ctx: list(ctxEntry),
    // ZMQ streams to subscribe to, and sockets to bind for publishers that connect: the --zmq / --zmq-bind schemas
    zmq: list(zmqEntry),
    zmq_bind: list(zmqBindEntry),
    router: section(routerSection),
    // server id → its KV capacity in blocks (every cache level and rank): the bound of the sticky ideal
    kv_capacity_blocks: z.preprocess(
      (v) => v ?? {},
      z.record(z.string(), z.unknown(), { error: 'expected a mapping of server id to blocks' }),
    ),
    router_debug: z.optional(
      shorthand(
        'url',
        mapping(
          { url: required(values.httpUrl), interval: value(values.durationMs, WATCH_DEFAULTS.routerDebugIntervalMs) },
          'expected a URL or a mapping with url, interval',
        ),
      ),
    ),
    orchestrator_log: value(values.filePath),
    requests: z.preprocess((v) => (typeof v === 'string' ? [v] : v), list(requestLogEntry)),
    tokenizer: z.preprocess(
      (v) => v ?? undefined,
      z.optional(
        shorthand('path', mapping({ path: required(values.filePath) }, 'expected a path or a mapping with path')),
      ),
    ),
    ...fieldShape(WATCH_FIELDS),
  },
  'expected a mapping at the top level',
);

export type ConfigFile = z.output<typeof configFileSchema>;

/** The file's document validated, or the first problem as a ConfigError naming the file and key path. */
export function readConfigFile(doc: unknown, source: string): ConfigFile {
  const parsed = configFileSchema.safeParse(doc ?? {});
  if (parsed.success) return parsed.data;
  // unknown keys first, as a reader fixes a typo before its value
  const issue = parsed.error.issues.find((i) => i.code === 'unrecognized_keys') ?? parsed.error.issues[0]!;
  const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0] ?? ''] : issue.path;
  throw new ConfigError(
    path.length === 0 ? `${source}: ${issue.message}` : `${source}: ${pathText(path)}: ${issue.message}`,
  );
}
