// The lines TensorRT-LLM's newest logger prints for router.py's call sites (tensorrt_llm/logger.py: `log(severity,
// *msg)` joins "[TRT-LLM]", the tag, "[serve   ]", an optional "[RANK n]" and every argument with spaces, under
// logging's "[%m/%d/%Y-%H:%M:%S] " prefix). Each fixture is what one call site in router.py / router_utils.py prints.
import { describe, expect, it } from 'vitest';
import { parseOrchestratorLogLine } from './orchestrator-log.js';
import { createServerResolver } from './server-resolver.js';
import { orchestratorLogMessage, splitTrtllmLogLine } from './trtllm-log-line.js';

const resolve = createServerResolver({
  ctx0: ['http://127.0.0.1:42089'],
  ctx1: ['http://127.0.0.1:47487'],
});

// logger.info("router tokens_per_block unset: adopting worker's %d on %s", worker_tpb, server)
const ADOPT =
  "[06/03/2026-10:15:02] [TRT-LLM] [I] [serve   ] router tokens_per_block unset: adopting worker's %d on %s 128 127.0.0.1:42089";
// logger.warning("tokens_per_block mismatch on %s: router=%d worker=%d. KV events … for hit rate.", server, 32, 128)
const MISMATCH =
  '[06/03/2026-10:15:02] [TRT-LLM] [W] [serve   ] tokens_per_block mismatch on %s: router=%d worker=%d. KV events from worker cannot align with router block hashes; skipping event polling and relying on routed-block tracking for hit rate. 127.0.0.1:47487 32 128';
// router_utils: logger.info(f"BlockHashMixin: tokens_per_block=…{' (auto, adopts worker)'}, custom_tokenizer=…, …")
const MIXIN =
  '[06/03/2026-10:15:01] [TRT-LLM] [I] [serve   ] BlockHashMixin: tokens_per_block=32 (auto, adopts worker), custom_tokenizer=None, model_path=None, use_harmony=None';
// Router._prepare_server: logger.info(f"server is ready with info: {self._server_info[server]}")
const READY =
  "[06/03/2026-10:15:02] [TRT-LLM] [I] [serve   ] server is ready with info: {'kv_cache_hash_algo': 'v1_block_key', 'tokens_per_block': 128}";
// KvCacheAwareServerState.poll_and_update: logger.warning(f"Failed to poll KV cache events from {self._server}: {e}")
const POLL_FAIL =
  '[06/03/2026-10:15:09] [TRT-LLM] [W] [serve   ] [RANK 0] Failed to poll KV cache events from 127.0.0.1:42089: Server disconnected';

describe("TensorRT-LLM logger lines (the newest logger's form)", () => {
  it('splits the time, severity, module tag and rank off the message', () => {
    expect(splitTrtllmLogLine(POLL_FAIL)).toEqual({
      level: 'W',
      module: 'serve',
      rank: 0,
      message: 'Failed to poll KV cache events from 127.0.0.1:42089: Server disconnected',
    });
    expect(splitTrtllmLogLine('[TRT-LLM] [MPI_Rank 1] [I] Load engine takes: 78.3 sec')).toEqual({
      level: 'I',
      module: null,
      rank: 1,
      message: 'Load engine takes: 78.3 sec',
    });
    // "[RANK 100]" is 8 characters between brackets: a rank, not a module
    expect(splitTrtllmLogLine('[TRT-LLM] [I] [RANK 100] hello')).toMatchObject({ module: null, rank: 100 });
    expect(splitTrtllmLogLine('INFO: 127.0.0.1 - "POST /v1/completions HTTP/1.1" 200 OK')).toBeNull();
  });

  it('puts the values of a %-style call site back in place; anything else stays as printed', () => {
    expect(orchestratorLogMessage(ADOPT)).toBe(
      "router tokens_per_block unset: adopting worker's 128 on 127.0.0.1:42089",
    );
    expect(orchestratorLogMessage(MISMATCH)).toMatch(
      /^tokens_per_block mismatch on 127\.0\.0\.1:47487: router=32 worker=128\. /,
    );
    // a %d that is not a number is not this call site
    expect(orchestratorLogMessage("[TRT-LLM] [I] router tokens_per_block unset: adopting worker's %d on %s x y")).toBe(
      "router tokens_per_block unset: adopting worker's %d on %s x y",
    );
  });

  it("reads the newest router's adoption: the router's block size and the worker's, on the named server", () => {
    expect(parseOrchestratorLogLine(MIXIN, 1, resolve)).toEqual([
      expect.objectContaining({ kind: 'router-config', tokensPerBlock: null, profile: 'newest' }),
    ]);
    expect(parseOrchestratorLogLine(ADOPT, 2, resolve)).toEqual([
      expect.objectContaining({ kind: 'router-config', tokensPerBlock: 128, profile: 'newest' }),
      { kind: 'server-info', ts: 2, server: 'ctx0', hashAlgo: null, tokensPerBlock: 128 },
    ]);
  });

  it('reads polling skipped by design from the raw mismatch line', () => {
    const out = parseOrchestratorLogLine(MISMATCH, 3, resolve);
    expect(out[0]).toMatchObject({ kind: 'router-config', tokensPerBlock: 32, profile: 'newest' });
    expect(out[1]).toEqual({ kind: 'server-info', ts: 3, server: 'ctx1', hashAlgo: null, tokensPerBlock: 128 });
    expect(out[2]).toMatchObject({
      kind: 'router-server-fact',
      server: 'ctx1',
      fact: 'polling-skipped',
      routerTokensPerBlock: 32,
      workerTokensPerBlock: 128,
      divisible: true,
    });
  });

  it("learns a ConversationRouter from its own DEBUG lines (TLLM_LOG_LEVEL=debug or TLLM_LOG_LEVEL_BY_MODULE='debug:serve')", () => {
    // ConversationRouter.finish_request: logger.debug(f"ConversationRouter: FINISH server={server}, content_loads={loads}")
    const line =
      "[06/03/2026-10:16:00] [TRT-LLM] [V] [serve   ] ConversationRouter: FINISH server=127.0.0.1:42089, content_loads={'127.0.0.1:42089': 0, '127.0.0.1:47487': 512}";
    expect(parseOrchestratorLogLine(line, 5, resolve)).toEqual([
      expect.objectContaining({ kind: 'router-config', routerType: 'conversation', tokensPerBlock: null }),
    ]);
  });

  it('never takes the module tag for a server: the stock ready line names none', () => {
    expect(parseOrchestratorLogLine(READY, 1, resolve)).toEqual([]);
    expect(parseOrchestratorLogLine(POLL_FAIL, 9, resolve)).toEqual([
      { kind: 'poll-failure', ts: 9, server: 'ctx0', message: 'Server disconnected' },
    ]);
    // a token that cannot name a host is dropped with its observation
    expect(parseOrchestratorLogLine('Failed to poll KV cache events from ]: boom', 9, resolve)).toEqual([]);
    expect(parseOrchestratorLogLine("] server is ready with info: {'tokens_per_block': 64}", 1, resolve)).toEqual([]);
  });
});
