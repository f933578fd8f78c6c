// `kvsentinel sim run`: the TensorRT-LLM cluster simulator in virtual time (docs/design.md §7, §10).
import { closeSync, openSync, writeSync } from 'node:fs';
import type { Command } from 'commander';
import { assertVirtualConfig, runVirtual, type SimResult } from '../../sim/run-virtual.js';
import { presetConfig } from '../../sim/sim-config.js';
import { fileErrorText } from '../../sources/file-error-text.js';
import { CliError } from '../cli-error.js';
import { snakeCaseKeys } from '../reporters/snake-case.js';
import { collect } from '../collect-option.js';

interface RunOptions {
  preset: string;
  set: string[];
  json?: boolean;
  requestLog?: string;
  requestLogTokenIds?: boolean;
  orchestratorLog?: string;
}

function percent(ratio: number): string {
  return `${(ratio * 100).toFixed(1)}%`;
}

function summary(result: SimResult, wallSeconds: number): string {
  const r = result.router;
  const routerLine =
    r.type === 'kv_cache_aware'
      ? `kv_cache_aware (tokens_per_block ${r.tokensPerBlock}, max_batch_size ${r.maxBatchSize}, backfill ${String(r.backfillBlockHashesOnFinish)}, poll_on_finish ${String(r.pollOnFinish)})`
      : r.type;
  const lines = [
    `preset ${result.preset}: ${result.trajectories} trajectories, ${result.requests} requests, ${result.virtual_seconds.toFixed(0)} s virtual in ${wallSeconds.toFixed(1)} s`,
    `router        ${routerLine}`,
    `faults        ${result.faults.length === 0 ? 'none' : result.faults.join(', ')}`,
    `cache hit     ${percent(result.cache_hit_ratio)}  (Σ cached / Σ input tokens; mean input ${result.mean_input_tokens.toFixed(0)}, output ${result.mean_output_tokens.toFixed(0)})`,
    `turn scatter  ${percent(result.turn_scatter_ratio)}  (follow-up turns with cached < 50% of input)`,
    `moved turns   ${percent(result.moved_turn_ratio)}  (follow-up turns on another server than the previous turn)`,
    '',
    'server  requests  hit     events emitted/drained/dropped  router table  polls (failed)',
  ];
  for (const s of result.servers) {
    const hit = s.promptTokens === 0 ? 0 : s.cachedTokens / s.promptTokens;
    lines.push(
      `${s.server.padEnd(7)} ${String(s.requests).padStart(8)}  ${percent(hit).padStart(6)}  ${`${s.eventsEmitted}/${s.eventsDrained}/${s.eventsDropped}`.padStart(30)}  ${String(s.routerBlockTableSize ?? '-').padStart(12)}  ${s.routerPolls} (${s.routerPollFailures})`,
    );
  }
  return `${lines.join('\n')}\n`;
}

export function registerSimCommand(program: Command): void {
  const sim = program
    .command('sim')
    .description('simulated TensorRT-LLM disaggregated cluster (CTX workers, orchestrator, router, agentic workload)');
  sim
    .command('run')
    .description('run a preset in virtual time and print the prefix-cache hit and turn scatter')
    .option('--preset <name>', 'preset: seed (the bug report, events off) or healthy', 'seed')
    .option(
      '--set <key=value>',
      'override a setting or inject a fault (repeatable), e.g. ctx.event_buffer_max_size=10000; `kvsentinel sim keys` lists every key',
      collect,
      [],
    )
    .option('--json', 'print one JSON object')
    .option('--request-log <file>', 'write the canonical request log (JSONL)')
    .option('--request-log-token-ids', 'include prompt_token_ids in the request log')
    .option('--orchestrator-log <file>', 'write the orchestrator log (TensorRT-LLM format)')
    .action((options: RunOptions) => {
      const config = presetConfig(options.preset, options.set);
      assertVirtualConfig(config);
      const open = (path: string, flag: string): number => {
        try {
          return openSync(path, 'w');
        } catch (err) {
          throw new CliError(`${flag} ${path}: cannot write it: ${fileErrorText(err)}`);
        }
      };
      // streamed: with prompt_token_ids a request log is far too large to hold in memory
      const requestFd = options.requestLog !== undefined ? open(options.requestLog, '--request-log') : null;
      const orchestratorFd =
        options.orchestratorLog !== undefined ? open(options.orchestratorLog, '--orchestrator-log') : null;
      const tty = process.stderr.isTTY;
      const started = performance.now();
      const result = runVirtual(config, {
        ...(requestFd !== null ? { requestLog: (line: string) => writeSync(requestFd, `${line}\n`) } : {}),
        ...(options.requestLogTokenIds === true ? { requestLogPromptTokenIds: true } : {}),
        ...(orchestratorFd !== null
          ? { orchestratorLog: (line: string) => writeSync(orchestratorFd, `${line}\n`) }
          : {}),
        ...(tty
          ? {
              onProgress: (done: number, total: number, virtualMs: number) => {
                if (done % 16 === 0 || done === total)
                  process.stderr.write(
                    `\r  ${done}/${total} trajectories, ${(virtualMs / 1000).toFixed(0)} s virtual `,
                  );
              },
            }
          : {}),
      });
      if (tty) process.stderr.write('\n');
      const wallSeconds = (performance.now() - started) / 1000;
      if (requestFd !== null) closeSync(requestFd);
      if (orchestratorFd !== null) closeSync(orchestratorFd);
      if (options.json === true)
        process.stdout.write(`${JSON.stringify(snakeCaseKeys({ ...result, wall_seconds: wallSeconds }))}\n`);
      else process.stdout.write(summary(result, wallSeconds));
    });
}
