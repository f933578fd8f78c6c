// File sources: the orchestrator log (router configuration, poll failures) and request logs (JSONL decisions and
// outcomes), both followed like `tail -F`. A malformed line is counted (kvsentinel_bad_input_total) and logged with
// its line number, never fatal.
import { parseOrchestratorLogLine } from '../../core/watch/orchestrator-log.js';
import { parseRequestLogLine, type RequestLogPreset } from '../../core/watch/request-log.js';
import type { ServerResolver } from '../../core/watch/server-resolver.js';
import { FileFollower } from '../file-follower.js';
import type { Clock, Logger, ObservationSink, SourceReporter } from '../ports.js';

interface FileSourceDeps {
  readonly sink: ObservationSink;
  readonly status: SourceReporter;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly resolve: ServerResolver;
}

/** Lines of an orchestrator log read without one router INFO line before the source says the log is quiet. */
export const QUIET_LOG_LINES = 20;

export const QUIET_LOG_NOTE =
  "none of the router's INFO lines (BlockHashMixin: tokens_per_block, adopting worker's, EVENT_MATCH_DIAG, '<server> is ready with info') " +
  "in the lines read so far: TensorRT-LLM's newest logger logs at error unless the orchestrator runs with TLLM_LOG_LEVEL=info " +
  '(or TLLM_LOG_LEVEL_BY_MODULE="info:serve"; older builds default to WARNING), and the stock ' +
  "'server is ready with info' line names no server — router settings then come only from router: / --router.profile / --router.tokens-per-block (docs/orchestrator-log.md)";

export function createOrchestratorLogSource(
  deps: FileSourceDeps,
  options: { path: string; intervalMs: number; fromStart?: boolean },
): FileFollower {
  let lines = 0;
  let recognised = 0;
  return new FileFollower(
    'orchestrator-log',
    options.path,
    {
      status: deps.status,
      onLine: (line) => {
        lines++;
        for (const o of parseOrchestratorLogLine(line, deps.clock(), deps.resolve)) {
          if (o.kind !== 'poll-failure') recognised++;
          deps.sink.apply(o);
        }
        if (recognised === 0 && lines === QUIET_LOG_LINES)
          deps.status.note?.('orchestrator-log', `${lines} lines read, ${QUIET_LOG_NOTE}`);
        else if (recognised === 1 && lines > QUIET_LOG_LINES) deps.status.note?.('orchestrator-log', null);
      },
    },
    { intervalMs: options.intervalMs, fromStart: options.fromStart ?? true },
  );
}

export function createRequestLogSource(
  deps: FileSourceDeps,
  options: { path: string; format: RequestLogPreset | 'auto'; intervalMs: number; fromStart?: boolean; index: number },
): FileFollower {
  const name = `requests:${options.index}`;
  let logged = 0;
  return new FileFollower(
    name,
    options.path,
    {
      status: deps.status,
      onLine: (line, lineNo) => {
        const r = parseRequestLogLine(line, lineNo, options.format, {
          now: deps.clock(),
          resolve: deps.resolve,
        });
        if (r.issue !== null) {
          deps.status.badInput(name, r.issue.code);
          // the first problems are worth a log line each; after that the counter speaks
          if (logged++ < 20) deps.logger.warn(`${options.path}: ${r.issue.message}`, { code: r.issue.code });
        }
        for (const o of r.observations) deps.sink.apply(o);
      },
    },
    { intervalMs: options.intervalMs, fromStart: options.fromStart ?? true },
  );
}
