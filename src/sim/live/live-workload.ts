// The closed-loop multi-turn workload over HTTP: c slots, each running trajectories one after another through the
// orchestrator's `/v1/completions` (prompt token ids or text in `prompt`) or `/v1/chat/completions` (one user message)
// as workload.request_format says, with `X-Correlation-ID` per trajectory; the next turn
// leaves when the response is back and the tool ran (tool latency on the model's clock, so the time scale applies).
// Same trajectories as the virtual driver (content from (seed, index) only); a failed request is retried.
import { Agent, request as httpRequest } from 'undici';
import { parseUsage } from '../../core/wire/parse-usage.js';
import { Rng } from '../rng.js';
import { TurnStats, type TurnStatsSnapshot } from '../turn-stats.js';
import { systemPrefix, Trajectory, type WorkloadConfig } from '../workload.js';
import { sendOnce } from './http-kit.js';
import type { LiveScheduler } from './live-scheduler.js';

export interface LiveTurnRecord {
  readonly trajectory: number;
  readonly correlationId: string;
  /** 0-based */
  readonly turn: number;
  readonly promptTokens: number;
  readonly cachedTokens: number;
  /** usage.prompt_tokens_details.cached_tokens was present in the response */
  readonly cachedTokensReported: boolean;
}

export interface LiveWorkloadOptions {
  /** the orchestrator's base URL */
  readonly url: string;
  readonly workload: WorkloadConfig;
  readonly onTurn?: (record: LiveTurnRecord) => void;
  readonly onTrajectoryDone?: (done: number, total: number) => void;
  /** virtual ms before a failed request is retried (default 1000) */
  readonly retryDelayMs?: number;
  /** stop retrying a turn after this many failures (default 20) */
  readonly maxRetries?: number;
  /**
   * send chat messages instead of token ids (the simulator's real tokenizers then render them): the shared system
   * prefix as the system message, the rest of the context as one user message that grows every turn; each token id
   * becomes a pronounceable word, so the same trajectory always gives the same text
   */
  readonly chat?: boolean;
}

const CONSONANTS = 'bcdfghjklmnprstvwz';
const VOWELS = 'aeiou';

/** a token id as a word of syllables (deterministic, letters only) */
function wordOf(id: number): string {
  let n = id % 9000;
  let w = '';
  do {
    w += CONSONANTS[n % 18]! + VOWELS[Math.floor(n / 18) % 5]!;
    n = Math.floor(n / 90);
  } while (n > 0);
  return w;
}

const TOKEN_IDS_HEAD = Buffer.from('{"model":"kvsentinel-sim","prompt":[');

/**
 * A token-ids completion body written straight from the ids into one buffer of its exact size, for each request:
 * the client keeps no text of a trajectory between its turns.
 */
export function tokenIdsBody(tokens: Uint32Array, maxTokens: number): Buffer {
  const tail = Buffer.from(`],"max_tokens":${maxTokens}}`);
  let digits = Math.max(tokens.length - 1, 0); // the commas
  for (const id of tokens) digits += digitCount(id);
  const out = Buffer.allocUnsafe(TOKEN_IDS_HEAD.length + digits + tail.length);
  let at = TOKEN_IDS_HEAD.copy(out, 0);
  for (let i = 0; i < tokens.length; i++) {
    if (i > 0) out[at++] = 44;
    let id = tokens[i]!;
    // least significant digit last: write from the id's end (no view or reversal per id; prompts hold ~20k of them)
    at += digitCount(id);
    let d = at;
    do {
      out[--d] = 48 + (id % 10);
      id = (id / 10) >>> 0;
    } while (id > 0);
  }
  tail.copy(out, at);
  return out;
}

/** decimal digits of a token id (uint32) */
function digitCount(id: number): number {
  return id < 10 ? 1 : id < 100 ? 2 : id < 1000 ? 3 : id < 10_000 ? 4 : id < 100_000 ? 5 : String(id).length;
}

export interface LiveWorkloadSummary extends TurnStatsSnapshot {
  readonly trajectories: number;
  readonly failedRequests: number;
  /** responses without usage.prompt_tokens_details.cached_tokens */
  readonly missingCachedTokens: number;
  readonly abandonedTrajectories: number;
  readonly stopped: boolean;
  readonly wallSeconds: number;
}

/** a /v1/chat/completions request of these messages */
function chatRequest(
  messages: readonly { role: string; content: string }[],
  maxTokens: number,
): {
  path: string;
  body: string;
} {
  return {
    path: '/v1/chat/completions',
    body: JSON.stringify({ model: 'kvsentinel-sim', messages, max_tokens: maxTokens }),
  };
}

export class LiveWorkload {
  readonly #scheduler: LiveScheduler;
  readonly #options: LiveWorkloadOptions;
  readonly #config: WorkloadConfig;
  readonly #agent = new Agent({ keepAliveTimeout: 30_000 });
  readonly #stats = new TurnStats();
  readonly #prefix: Uint32Array;
  readonly #timing: Rng;
  readonly #started = performance.now();
  readonly #texts = new WeakMap<Trajectory, { length: number; text: string }>();
  readonly #strings = new WeakMap<Trajectory, { length: number; text: string }>();
  #systemText: string | undefined;
  #next = 0;
  #done = 0;
  #abandoned = 0;
  #failed = 0;
  #missingCached = 0;
  #activeSlots = 0;
  #requestSeq = 0;
  #stopped = false;
  #resolve: (summary: LiveWorkloadSummary) => void = () => undefined;
  /** resolves when every trajectory finished (or stop() was called) */
  readonly done: Promise<LiveWorkloadSummary>;

  constructor(scheduler: LiveScheduler, options: LiveWorkloadOptions) {
    this.#scheduler = scheduler;
    this.#options = options;
    this.#config = options.workload;
    this.#prefix = systemPrefix(options.workload);
    this.#timing = new Rng(options.workload.seed, 0x7115);
    this.done = new Promise((resolve) => {
      this.#resolve = resolve;
    });
  }

  summary(): LiveWorkloadSummary {
    return {
      ...this.#stats.snapshot(),
      trajectories: this.#done,
      failedRequests: this.#failed,
      missingCachedTokens: this.#missingCached,
      abandonedTrajectories: this.#abandoned,
      stopped: this.#stopped,
      wallSeconds: (performance.now() - this.#started) / 1000,
    };
  }

  start(): void {
    const slots = Math.min(this.#config.concurrency, this.#config.trajectories);
    if (slots === 0) this.#finish();
    for (let slot = 0; slot < slots; slot++) {
      this.#activeSlots++;
      const offset = this.#config.rampMs * this.#timing.next();
      this.#scheduler.at(this.#scheduler.now() + offset, () => this.#startNext());
    }
  }

  async stop(): Promise<LiveWorkloadSummary> {
    if (!this.#stopped) {
      this.#stopped = true;
      await this.#agent.destroy().catch(() => undefined);
      this.#finish();
    }
    return this.done;
  }

  #finish(): void {
    this.#resolve(this.summary());
  }

  #slotDone(): void {
    this.#activeSlots--;
    if (this.#activeSlots === 0) {
      void this.#agent.close().catch(() => undefined);
      this.#finish();
    }
  }

  #startNext(): void {
    if (this.#stopped) return;
    if (this.#next >= this.#config.trajectories) {
      this.#slotDone();
      return;
    }
    const trajectory = new Trajectory(this.#config, this.#next++, this.#prefix);
    void this.#runTurn(trajectory, 0, 0);
  }

  /** the prompt as text: each id one code point (surrogates skipped), which the simulated servers tokenize back */
  #promptString(trajectory: Trajectory): string {
    const tokens = trajectory.tokens();
    const cached = this.#strings.get(trajectory) ?? { length: 0, text: '' };
    let part = '';
    for (let i = cached.length; i < trajectory.length; i++) {
      const id = tokens[i]!;
      part += String.fromCodePoint(id < 0xd800 ? id : id + 0x800);
    }
    const next = { length: trajectory.length, text: cached.text + part };
    this.#strings.set(trajectory, next);
    return next.text;
  }

  #outgoing(trajectory: Trajectory, turn: number): { path: string; once: ReturnType<typeof sendOnce> } {
    const { path, body } = this.#request(trajectory, turn);
    return { path, once: sendOnce(body) };
  }

  #request(trajectory: Trajectory, turn: number): { path: string; body: string | Buffer } {
    const maxTokens = trajectory.turns[turn]!.outputTokens;
    if (this.#options.chat === true) {
      const chat = this.#chatText(trajectory);
      return chatRequest(
        [
          { role: 'system', content: chat.system },
          { role: 'user', content: chat.user },
        ],
        maxTokens,
      );
    }
    switch (this.#config.requestFormat) {
      case 'token-ids':
        return {
          path: '/v1/completions',
          body: tokenIdsBody(trajectory.tokens().subarray(0, trajectory.length), maxTokens),
        };
      case 'text':
        return {
          path: '/v1/completions',
          body: JSON.stringify({
            model: 'kvsentinel-sim',
            prompt: this.#promptString(trajectory),
            max_tokens: maxTokens,
          }),
        };
      case 'chat':
        return chatRequest([{ role: 'user', content: this.#promptString(trajectory) }], maxTokens);
      case 'chat-turns':
        return chatRequest(this.#turnMessages(trajectory), maxTokens);
    }
  }

  /** `chat-turns`: system prefix, first task, and (after the first turn) the rest, each as code points like #promptString */
  #turnMessages(trajectory: Trajectory): { role: string; content: string }[] {
    const text = this.#promptString(trajectory);
    // code point offsets equal token offsets: one code point per id
    const points = Array.from(text);
    const system = Math.min(this.#prefix.length, points.length);
    const task = Math.min(system + trajectory.taskTokens, points.length);
    const messages = [
      { role: 'system', content: points.slice(0, system).join('') },
      { role: 'user', content: points.slice(system, task).join('') },
    ];
    if (task < points.length) messages.push({ role: 'user', content: points.slice(task).join('') });
    return messages;
  }

  /** the context as words (see `chat`), extended incrementally (contexts only grow) */
  #chatText(trajectory: Trajectory): { system: string; user: string } {
    const tokens = trajectory.tokens();
    const split = Math.min(this.#prefix.length, trajectory.length);
    let cached = this.#texts.get(trajectory) ?? { length: split, text: '' };
    const part: string[] = [];
    for (let i = cached.length; i < trajectory.length; i++) part.push(wordOf(tokens[i]!));
    const joined = part.join(' ');
    const text = cached.text === '' ? joined : joined === '' ? cached.text : `${cached.text} ${joined}`;
    cached = { length: trajectory.length, text };
    this.#texts.set(trajectory, cached);
    this.#systemText ??= Array.from(this.#prefix, wordOf).join(' ');
    return { system: this.#systemText, user: text };
  }

  async #send(
    trajectory: Trajectory,
    turn: number,
  ): Promise<{ promptTokens: number; cachedTokens: number | null } | null> {
    // the body goes once: between sending it and the answer the trajectory's ids are all the client holds (built in
    // a function that returns first: V8 keeps what an async function's registers hold until it returns)
    const { path, once } = this.#outgoing(trajectory, turn);
    const requestId = `wl-${(++this.#requestSeq).toString(16).padStart(8, '0')}`;
    try {
      const res = await httpRequest(`${this.#options.url}${path}`, {
        method: 'POST',
        body: once.body,
        headers: {
          'content-type': 'application/json',
          'content-length': String(once.length),
          'x-correlation-id': trajectory.correlationId,
          'x-request-id': requestId,
        },
        dispatcher: this.#agent,
        headersTimeout: 600_000,
        bodyTimeout: 600_000,
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) return null;
      const usage = parseUsage(text).value;
      return { promptTokens: usage?.promptTokens ?? trajectory.length, cachedTokens: usage?.cachedTokens ?? null };
    } catch {
      return null;
    }
  }

  async #runTurn(trajectory: Trajectory, turn: number, attempt: number): Promise<void> {
    if (this.#stopped) return;
    const result = await this.#send(trajectory, turn);
    if (this.#stopped) return;
    if (result === null) {
      this.#failed++;
      if (attempt + 1 >= (this.#options.maxRetries ?? 20)) {
        this.#abandoned++;
        this.#startNext();
        return;
      }
      this.#scheduler.at(
        this.#scheduler.now() + (this.#options.retryDelayMs ?? 1000),
        () => void this.#runTurn(trajectory, turn, attempt + 1),
      );
      return;
    }
    if (result.cachedTokens === null) this.#missingCached++;
    const cached = result.cachedTokens ?? 0;
    this.#stats.add(result.promptTokens, cached, turn > 0);
    this.#options.onTurn?.({
      trajectory: trajectory.index,
      correlationId: trajectory.correlationId,
      turn,
      promptTokens: result.promptTokens,
      cachedTokens: cached,
      cachedTokensReported: result.cachedTokens !== null,
    });
    if (turn + 1 >= trajectory.turns.length) {
      this.#done++;
      this.#options.onTrajectoryDone?.(this.#done, this.#config.trajectories);
      this.#startNext();
      return;
    }
    const plan = trajectory.turns[turn]!;
    this.#scheduler.at(this.#scheduler.now() + plan.toolMs, () => {
      trajectory.advance(turn);
      void this.#runTurn(trajectory, turn + 1, 0);
    });
  }
}
