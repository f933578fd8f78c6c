// The source flags `serve`, `audit` (live) and `record` share (docs/design.md §7: "same source flags as serve").
import type { Command } from 'commander';
import { CliError } from '../cli-error.js';
import { collect } from '../collect-option.js';
import { ModelTokenizer } from '../../sources/tokenizer/model-tokenizer.js';
import { ConfigError } from '../../app/config/config-error.js';
import { loadConfig, type ServeConfig, type ServeFlags } from '../../app/config/serve-config.js';

export function addSourceOptions(command: Command): Command {
  return command
    .option('--config.file <file>', 'YAML or JSON configuration file')
    .option('--config <file>', 'alias of --config.file')
    .option(
      '--relay <ID=URL@[HOST:]PORT>',
      'relay CTX worker ID on its own port (repeatable); the router then uses HOST:PORT. HOST defaults to 127.0.0.1 (the router in the same pod); @0.0.0.0:PORT exposes it deliberately',
      collect,
    )
    .option(
      '--ctx <ID=URL>',
      'watch a CTX worker (/server_info; with --events exclusive also drain its events) (repeatable)',
      collect,
    )
    .option(
      '--zmq <ID=ENDPOINT[,replay=ENDPOINT][,engine=E][,ranks=N][,topic=T][,hash=ALGO][,seed=S][,hit=TIER]>',
      "subscribe to a worker's ZMQ KV-event stream (engine trtllm|vllm|sglang; rank r at port + r; vLLM: hash=sha256_cbor and seed=PYTHONHASHSEED verify its block hashes; vLLM/SGLang: hit=gpu|cpu|disk, the slowest medium reused blocks load from, default gpu) (repeatable)",
      collect,
    )
    .option(
      '--zmq-bind <ENDPOINT[,engine=E][,ranks=N][,topic=T][,hash=ALGO][,seed=S][,forward=ADDRESS]>',
      "bind a socket KV-event publishers connect to (vLLM/SGLang without a wildcard endpoint, llm-d central mode); each message names its server by topic (kv@POD@MODEL, else the whole topic); rank r binds port + r; forward=tcp://HOST:PORT passes every message on, unchanged, to the consumer that bound it before (llm-d's scheduler) (repeatable)",
      collect,
    )
    .option(
      '--events <mode>',
      "none | exclusive: drain --ctx workers' /kv_cache_events (only when no router consumes them)",
    )
    .option(
      '--router-debug <url>',
      'router debug endpoint, an optional contract stock TensorRT-LLM does not serve (docs/design.md §8)',
    )
    .option(
      '--requests <[FORMAT:]FILE>',
      'request log JSONL to follow; FORMAT canonical|perf-metrics|openai|relay (repeatable)',
      collect,
    )
    .option('--orchestrator-log <file>', 'orchestrator log to follow')
    .option('--router.profile <profile>', 'which router.py the orchestrator runs when no log says: 2026-06 | newest')
    .option('--router.tokens-per-block <n>', "the router's tokens_per_block when no log or debug endpoint says")
    .option(
      '--kv-capacity <ID=BLOCKS>',
      "a CTX worker's KV capacity in blocks (all cache levels and ranks) when its events do not state it: bounds the sticky ideal with events off (repeatable)",
      collect,
    )
    .option(
      '--tokenizer <path>',
      "the model's tokenizer (Hugging Face model folder, or its tokenizer.json beside tokenizer_config.json): text and chat requests are rendered as the router renders them, for predicted matches and render-drift",
    )
    .option(
      '--state.max-table-blocks <n>',
      'blocks per server kept in each block table (worker truth, router replica); past it arbitrary blocks are evicted and counted (default 4000000)',
    );
}

export interface SourceOptionValues {
  config?: string;
  'config.file'?: string;
  relay?: string[];
  ctx?: string[];
  zmq?: string[];
  zmqBind?: string[];
  events?: string;
  routerDebug?: string;
  requests?: string[];
  orchestratorLog?: string;
  'web.listenAddress'?: string;
  'web.bearerTokenFile'?: string;
  'state.maxTableBlocks'?: string;
  'router.profile'?: string;
  'router.tokensPerBlock'?: string;
  kvCapacity?: string[];
  tokenizer?: string;
}

export function sourceFlags(options: SourceOptionValues): ServeFlags {
  if (options.config !== undefined && options['config.file'] !== undefined)
    throw new CliError('give --config or --config.file, not both');
  if (options.events !== undefined && options.events !== 'none' && options.events !== 'exclusive')
    throw new CliError(`--events '${options.events}': expected none or exclusive`);
  const configFile = options['config.file'] ?? options.config;
  return {
    ...(configFile !== undefined ? { configFile } : {}),
    ...(options.relay !== undefined ? { relay: options.relay } : {}),
    ...(options.ctx !== undefined ? { ctx: options.ctx } : {}),
    ...(options.zmq !== undefined ? { zmq: options.zmq } : {}),
    ...(options.zmqBind !== undefined ? { zmqBind: options.zmqBind } : {}),
    ...(options.events !== undefined ? { events: options.events } : {}),
    ...(options.routerDebug !== undefined ? { routerDebug: options.routerDebug } : {}),
    ...(options.requests !== undefined ? { requests: options.requests } : {}),
    ...(options.orchestratorLog !== undefined ? { orchestratorLog: options.orchestratorLog } : {}),
    ...(options['web.listenAddress'] !== undefined ? { listenAddress: options['web.listenAddress'] } : {}),
    ...(options['web.bearerTokenFile'] !== undefined ? { bearerTokenFile: options['web.bearerTokenFile'] } : {}),
    ...(options['state.maxTableBlocks'] !== undefined ? { maxTableBlocks: options['state.maxTableBlocks'] } : {}),
    ...(options['router.profile'] !== undefined ? { routerProfile: options['router.profile'] } : {}),
    ...(options['router.tokensPerBlock'] !== undefined
      ? { routerTokensPerBlock: options['router.tokensPerBlock'] }
      : {}),
    ...(options.kvCapacity !== undefined ? { kvCapacity: options.kvCapacity } : {}),
    ...(options.tokenizer !== undefined ? { tokenizer: options.tokenizer } : {}),
  };
}

/**
 * loadConfig, and the tokenizer loaded once here, so a missing or malformed one is refused (naming the flag or key
 * and the file) before anything starts, and by --config.check.
 */
export async function loadCliConfig(flags: ServeFlags): Promise<ServeConfig> {
  const config = await loadConfig(flags);
  if (config.tokenizer !== null) {
    const named = flags.tokenizer !== undefined ? '--tokenizer' : 'tokenizer.path';
    ModelTokenizer.loadOrRefuse(
      config.tokenizer,
      (err) => new ConfigError(`${named}: ${err.message}`, { cause: err, code: 'tokenizer-invalid' }),
    );
  }
  return config;
}

export function hasSources(config: ServeConfig): boolean {
  return (
    config.relays.length > 0 ||
    config.ctx.length > 0 ||
    config.zmq.length > 0 ||
    config.zmqBind.length > 0 ||
    config.routerDebug !== null ||
    config.orchestratorLog !== null ||
    config.requestLogs.length > 0
  );
}

/** refuses a configuration without a source, with `message` (the commands that take more than sources say so) */
export function requireSources(config: ServeConfig, message: string = NO_SOURCE_MESSAGE): void {
  if (!hasSources(config)) throw new CliError(message);
}

export const NO_SOURCE_MESSAGE =
  'no source configured: give --relay, --ctx, --zmq, --zmq-bind, --router-debug, --requests or --orchestrator-log (or a --config.file)';
