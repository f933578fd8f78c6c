// The usage of a completion response (JSON or SSE): prompt_tokens and prompt_tokens_details.cached_tokens, the
// server's own count of prompt tokens served from its prefix cache (docs/trtllm-wire.md §4).

export interface CompletionUsage {
  readonly promptTokens: number | null;
  readonly cachedTokens: number | null;
}

const NONE: CompletionUsage = { promptTokens: null, cachedTokens: null };

function count(v: unknown): number | null {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : null;
}

function fromObject(v: unknown): CompletionUsage | null {
  if (typeof v !== 'object' || v === null) return null;
  const usage = (v as { usage?: unknown }).usage;
  if (typeof usage !== 'object' || usage === null) return null;
  const u = usage as { prompt_tokens?: unknown; prompt_tokens_details?: unknown };
  const details =
    typeof u.prompt_tokens_details === 'object' && u.prompt_tokens_details !== null
      ? (u.prompt_tokens_details as { cached_tokens?: unknown })
      : {};
  return { promptTokens: count(u.prompt_tokens), cachedTokens: count(details.cached_tokens) };
}

// without the g flag (a module-level g expression carries a lastIndex every caller shares): matchAll gets its own copy
const PROMPT_RE = /"prompt_tokens"\s*:\s*(\d+)/;
const CACHED_RE = /"cached_tokens"\s*:\s*(\d+)/;

function lastMatch(re: RegExp, text: string): number | null {
  let last: string | undefined;
  for (const m of text.matchAll(new RegExp(re.source, 'g'))) last = m[1];
  return last !== undefined ? Number(last) : null;
}

/**
 * `complete` is false when only the tail of a large response was kept: then the last `"prompt_tokens":N` /
 * `"cached_tokens":N` pair in the tail is used (escaped quotes inside generated text cannot match).
 */
export function parseCompletionUsage(text: string, options: { sse: boolean; complete: boolean }): CompletionUsage {
  if (!options.complete) return { promptTokens: lastMatch(PROMPT_RE, text), cachedTokens: lastMatch(CACHED_RE, text) };
  if (!options.sse) {
    try {
      return fromObject(JSON.parse(text)) ?? NONE;
    } catch {
      return NONE;
    }
  }
  // SSE: the usage chunk is one of the last data lines; walk back from the end
  const lines = text.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = (lines[i] as string).trim();
    if (!line.startsWith('data:')) continue;
    const payload = line.slice(5).trim();
    if (payload === '[DONE]' || !payload.includes('"usage"')) continue;
    try {
      const usage = fromObject(JSON.parse(payload));
      if (usage !== null && (usage.promptTokens !== null || usage.cachedTokens !== null)) return usage;
    } catch {
      continue;
    }
  }
  return NONE;
}
