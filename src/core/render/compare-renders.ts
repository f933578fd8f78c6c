// Render parity: the token ids the router hashes (its own render of a text or chat request, or the ids the request
// carried) against the ids the worker tokenized for the same request (`prompt_token_ids` of its context-only
// response). Any difference before the end of the prompt changes every block hash from the block it falls in: the
// router's lookups for that prompt miss whatever the workers hold (docs/trtllm-wire.md §7.3). Pure; ids only.

export const RENDER_DRIFT_CAUSES = [
  'doubled-bos',
  'missing-bos',
  'generation-prompt',
  'tools',
  'space-handling',
  'template',
] as const;
export type RenderDriftCause = (typeof RENDER_DRIFT_CAUSES)[number];

export type RenderSide = 'router' | 'worker';

export interface RenderDiff {
  /** first position where the two differ (the shorter length when one is a prefix of the other) */
  readonly position: number;
  readonly routerLength: number;
  readonly workerLength: number;
  /** ids equal again at the end of both, after the difference */
  readonly commonSuffix: number;
  /** ids only the router has / only the worker has between the common prefix and the common suffix */
  readonly routerSpan: number;
  readonly workerSpan: number;
  /** position of the first id of the windows below */
  readonly windowFrom: number;
  readonly routerWindow: readonly number[];
  readonly workerWindow: readonly number[];
  readonly cause: RenderDriftCause;
  /** the side that has the extra or different ids the cause names (null: both differ) */
  readonly side: RenderSide | null;
}

export interface RenderContext {
  /** the model's BOS token id, when a tokenizer is known */
  readonly bosId: number | null;
  /** the request defined tools (their schema is rendered by the template) */
  readonly hasTools: boolean;
  /** a token's vocabulary string (never leaves the process; only the cause reads it) */
  readonly tokenText: ((id: number) => string | null) | null;
}

const WINDOW_BEFORE = 4;
const WINDOW_AFTER = 8;

type Ids = ArrayLike<number>;

function slice(ids: Ids, from: number, to: number): number[] {
  const out: number[] = [];
  for (let i = from; i < Math.min(to, ids.length); i++) out.push(ids[i]!);
  return out;
}

/** Vocabulary strings with the space markers of byte-level (Ġ) and Metaspace (▁) pre-tokenizers and spaces removed. */
function spaceless(ids: Ids, from: number, to: number, text: (id: number) => string | null): string | null {
  let out = '';
  for (let i = from; i < to; i++) {
    const t = text(ids[i]!);
    if (t === null) return null;
    out += t;
  }
  return out.replace(/[\u0120\u2581\s]/gu, '');
}

function classify(
  router: Ids,
  worker: Ids,
  p: number,
  suffix: number,
  context: RenderContext,
): { cause: RenderDriftCause; side: RenderSide | null } {
  const rEnd = router.length - suffix;
  const wEnd = worker.length - suffix;
  const rSpan = rEnd - p;
  const wSpan = wEnd - p;
  const first = router.length > 0 ? router[0] : worker[0];
  const bos = context.bosId ?? first;
  // one extra id at the start that repeats the first (BOS added by the template and again by the encoder)
  for (const [side, longer, other, span, otherSpan] of [
    ['router', router, worker, rSpan, wSpan],
    ['worker', worker, router, wSpan, rSpan],
  ] as const) {
    if (span === 1 && otherSpan === 0 && p === 1 && longer[0] === bos && longer[1] === bos && other[0] === bos)
      return { cause: 'doubled-bos', side };
    if (span === 1 && otherSpan === 0 && p === 0 && longer[0] === bos && (context.bosId !== null || other[0] !== bos))
      return { cause: 'missing-bos', side: side === 'router' ? 'worker' : 'router' };
  }
  // one side is the other plus a tail: the generation prompt (add_generation_prompt) or a template's closing text
  if (suffix === 0 && p > 0 && (rSpan === 0 || wSpan === 0) && (p === router.length || p === worker.length)) {
    return { cause: 'generation-prompt', side: rSpan > 0 ? 'router' : 'worker' };
  }
  if (context.tokenText !== null && rSpan > 0 && wSpan > 0) {
    // the same characters split differently around spaces: a byte-level pre-tokenizer on one side, Metaspace on the other
    const a = spaceless(router, p, rEnd, context.tokenText);
    const b = spaceless(worker, p, wEnd, context.tokenText);
    if (a !== null && a === b) return { cause: 'space-handling', side: null };
  }
  if (context.hasTools && p > 0 && (rSpan === 0) !== (wSpan === 0))
    return { cause: 'tools', side: rSpan > 0 ? 'router' : 'worker' };
  return { cause: 'template', side: null };
}

/** Null when both are the same ids; else where and how they differ. */
export function compareRenders(router: Ids, worker: Ids, context: RenderContext): RenderDiff | null {
  const n = Math.min(router.length, worker.length);
  let p = 0;
  while (p < n && router[p] === worker[p]) p++;
  if (p === n && router.length === worker.length) return null;
  let suffix = 0;
  while (suffix < n - p && router[router.length - 1 - suffix] === worker[worker.length - 1 - suffix]) suffix++;
  const { cause, side } = classify(router, worker, p, suffix, context);
  const from = Math.max(0, p - WINDOW_BEFORE);
  return {
    position: p,
    routerLength: router.length,
    workerLength: worker.length,
    commonSuffix: suffix,
    routerSpan: router.length - suffix - p,
    workerSpan: worker.length - suffix - p,
    windowFrom: from,
    routerWindow: slice(router, from, p + WINDOW_AFTER),
    workerWindow: slice(worker, from, p + WINDOW_AFTER),
    cause,
    side,
  };
}

/**
 * The share of the router's hashed tokens (prompt − 1) whose block keys still equal the worker's: the blocks that end
 * before the first difference. 0 when the difference falls in the first block: nothing the router looks up can match.
 */
export function matchableShare(diff: Pick<RenderDiff, 'position' | 'routerLength'>, tokensPerBlock: number): number {
  const hashed = Math.max(diff.routerLength - 1, 0);
  if (hashed === 0) return 1;
  const intact = Math.floor(Math.min(diff.position, hashed) / tokensPerBlock) * tokensPerBlock;
  return intact / hashed;
}
