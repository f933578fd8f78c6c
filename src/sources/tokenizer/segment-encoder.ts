// Encodes a rendered chat prompt segment by segment with a cache, so a follow-up turn costs only its new messages.
// Hugging Face tokenizers first splits the input at added tokens (<｜User｜>, <｜end▁of▁sentence｜>, …), then
// normalizes, pre-tokenizes and encodes each piece between them on its own; encoding those pieces separately and
// joining the ids (added tokens as their ids) is therefore the same as encoding the whole string — provided nothing
// looks across pieces: no normalizer, no Metaspace pre-tokenizer (its "first" prepend scheme depends on the piece's
// offset), no added token that strips or needs word boundaries. Only then is it used, and only after a self-test on
// sample text agrees with the full encode; otherwise every prompt is encoded whole.
import type tokenizers from 'tokenizers';
import type { TokenizerFiles } from './tokenizer-files.js';

const SAMPLE =
  'Hello  world\n\n\tindented: naïve café, 日本語のテキスト 🚀, 12345678 + 3.14 = x;\r\n  trailing space ' +
  '```js\nconst a = b ?? "c";\n```';

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function hasKey(v: unknown, key: string, value: string): boolean {
  if (Array.isArray(v)) return v.some((x) => hasKey(x, key, value));
  if (typeof v !== 'object' || v === null) return false;
  return Object.entries(v as Record<string, unknown>).some(
    ([k, x]) => (k === key && x === value) || hasKey(x, key, value),
  );
}

function emptyNormalizer(n: unknown): boolean {
  if (n === null || n === undefined) return true;
  const o = n as Record<string, unknown>;
  return o['type'] === 'Sequence' && Array.isArray(o['normalizers']) && o['normalizers'].length === 0;
}

export class SegmentEncoder {
  readonly #tokenizer: tokenizers.Tokenizer;
  readonly #split: RegExp;
  readonly #ids: ReadonlyMap<string, number>;
  readonly #cache = new Map<string, Uint32Array>();
  readonly #maxChars: number;
  #chars = 0;

  private constructor(tokenizer: tokenizers.Tokenizer, added: ReadonlyMap<string, number>, maxChars: number) {
    this.#tokenizer = tokenizer;
    this.#ids = added;
    // leftmost-longest, as tokenizers matches added tokens
    const alternatives = [...added.keys()].sort((a, b) => b.length - a.length).map(escape);
    this.#split = new RegExp(`(${alternatives.join('|')})`, 'u');
    this.#maxChars = maxChars;
  }

  /** The encoder when `files` make segment encoding exact (and a self-test agrees); null: encode whole prompts. */
  static async create(
    tokenizer: tokenizers.Tokenizer,
    files: TokenizerFiles,
    maxChars = 16 * 1024 * 1024,
  ): Promise<SegmentEncoder | null> {
    if (
      files.addedTokens.length === 0 ||
      !emptyNormalizer(files.normalizer) ||
      hasKey(files.preTokenizer, 'type', 'Metaspace')
    )
      return null;
    if (files.addedTokens.some((t) => t.lstrip || t.rstrip || t.singleWord)) return null;
    const added = new Map(files.addedTokens.map((t) => [t.content, t.id]));
    const encoder = new SegmentEncoder(tokenizer, added, maxChars);
    const specials = [...added.keys()].slice(0, 8);
    const sample = specials.map((s, i) => `${i % 2 === 0 ? ' ' : ''}${s}${SAMPLE.slice(i * 7)}`).join('');
    const whole = (await tokenizer.encode(sample, null, { addSpecialTokens: false })).getIds();
    const pieces = await encoder.encode(sample);
    encoder.#cache.clear();
    encoder.#chars = 0;
    return whole.length === pieces.length && whole.every((id, i) => pieces[i] === id) ? encoder : null;
  }

  async encode(text: string): Promise<Uint32Array> {
    const parts = text.split(this.#split);
    const missing: string[] = [];
    for (let i = 0; i < parts.length; i += 2) {
      const p = parts[i]!;
      if (p !== '' && !this.#cache.has(p) && !missing.includes(p)) missing.push(p);
    }
    const fresh = new Map<string, Uint32Array>();
    if (missing.length > 0) {
      const encodings = await this.#tokenizer.encodeBatch(missing, { addSpecialTokens: false });
      encodings.forEach((e, i) => fresh.set(missing[i]!, Uint32Array.from(e.getIds())));
    }
    const pieces: Uint32Array[] = [];
    let length = 0;
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      if (i % 2 === 1) {
        pieces.push(Uint32Array.of(this.#ids.get(p)!));
        length++;
        continue;
      }
      if (p === '') continue;
      const ids = fresh.get(p) ?? this.#lookup(p)!;
      pieces.push(ids);
      length += ids.length;
    }
    for (const [p, ids] of fresh) this.#remember(p, ids);
    const out = new Uint32Array(length);
    let at = 0;
    for (const ids of pieces) {
      out.set(ids, at);
      at += ids.length;
    }
    return out;
  }

  #lookup(p: string): Uint32Array | undefined {
    const ids = this.#cache.get(p);
    if (ids !== undefined) {
      // most recently used last
      this.#cache.delete(p);
      this.#cache.set(p, ids);
    }
    return ids;
  }

  #remember(p: string, ids: Uint32Array): void {
    if (p.length > this.#maxChars / 4 || this.#cache.has(p)) return;
    this.#cache.set(p, ids);
    this.#chars += p.length;
    for (const [old] of this.#cache) {
      if (this.#chars <= this.#maxChars) break;
      this.#cache.delete(old);
      this.#chars -= old.length;
    }
  }
}
