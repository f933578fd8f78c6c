// Finds and reads a model's tokenizer files the way Hugging Face's `AutoTokenizer.from_pretrained` does for a fast
// tokenizer: `tokenizer.json` (the Rust pipeline), `tokenizer_config.json` (special tokens, add_bos_token /
// add_eos_token, the chat template), a `chat_template.jinja` beside them (which newer transformers prefer over the
// config's), and `special_tokens_map.json` for special tokens the config does not name. PATH is the model folder or
// its tokenizer.json. Every problem is a TokenizerFileError naming the file.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { KvsentinelError } from '../../core/errors.js';

export class TokenizerFileError extends KvsentinelError {
  override readonly name = 'TokenizerFileError';
  readonly file: string;
  constructor(file: string, message: string) {
    super('tokenizer-invalid', `${file}: ${message}`);
    this.file = file;
  }
}

/** A chat template: one, or several by name (HF: "default", "tool_use", …). */
export type ChatTemplates = string | ReadonlyMap<string, string>;

export interface TokenizerFiles {
  readonly tokenizerJson: string;
  /** the tokenizer_config.json read, or null when the folder has none (text prompts only then) */
  readonly configFile: string | null;
  /** where the chat template came from, null when there is none */
  readonly chatTemplateFile: string | null;
  readonly chatTemplate: ChatTemplates | null;
  /** special tokens by name (bos_token, eos_token, …) as their strings */
  readonly specialTokens: Readonly<Record<string, string>>;
  /** tokenizer_config add_bos_token / add_eos_token when stated (transformers then rebuilds the post-processor) */
  readonly addBosToken: boolean | null;
  readonly addEosToken: boolean | null;
  readonly tokenizerClass: string | null;
  /** tokenizer.json's added tokens (special or not), as the file lists them */
  readonly addedTokens: readonly AddedTokenSpec[];
  /** tokenizer.json's normalizer and pre_tokenizer (the segment encoder checks they carry no cross-segment state) */
  readonly normalizer: unknown;
  readonly preTokenizer: unknown;
}

export interface AddedTokenSpec {
  readonly id: number;
  readonly content: string;
  readonly lstrip: boolean;
  readonly rstrip: boolean;
  readonly singleWord: boolean;
}

const SPECIAL_TOKEN_KEYS = [
  'bos_token',
  'eos_token',
  'unk_token',
  'sep_token',
  'pad_token',
  'cls_token',
  'mask_token',
] as const;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function readJson(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new TokenizerFileError(file, `cannot read: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new TokenizerFileError(file, `not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** A special token in a config: a string, or an AddedToken object ({"content": …}). */
function tokenString(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (isRecord(v) && typeof v['content'] === 'string') return v['content'];
  return null;
}

function templatesOf(file: string, v: unknown): ChatTemplates | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) {
    const named = new Map<string, string>();
    v.forEach((entry, i) => {
      if (!isRecord(entry) || typeof entry['name'] !== 'string' || typeof entry['template'] !== 'string') {
        throw new TokenizerFileError(file, `chat_template[${i}]: expected {"name": string, "template": string}`);
      }
      named.set(entry['name'], entry['template']);
    });
    return named;
  }
  throw new TokenizerFileError(file, 'chat_template: expected a string or a list of {name, template}');
}

function optionalBool(file: string, config: Record<string, unknown>, key: string): boolean | null {
  const v = config[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'boolean')
    throw new TokenizerFileError(file, `${key}: expected true or false, got ${JSON.stringify(v)}`);
  return v;
}

/** Resolves PATH (a folder or its tokenizer.json) and reads the files; throws TokenizerFileError. */
export function readTokenizerFiles(path: string): TokenizerFiles {
  if (!existsSync(path))
    throw new TokenizerFileError(path, 'no such file or folder (expected a model folder or its tokenizer.json)');
  const isDir = statSync(path).isDirectory();
  const dir = isDir ? path : dirname(path);
  const tokenizerJson = isDir ? join(path, 'tokenizer.json') : path;
  if (!isDir && basename(path) === 'tokenizer_config.json') {
    throw new TokenizerFileError(path, 'expected the model folder or its tokenizer.json, not tokenizer_config.json');
  }
  if (!existsSync(tokenizerJson)) {
    throw new TokenizerFileError(
      tokenizerJson,
      'missing: kvsentinel needs the fast tokenizer file (save the tokenizer with transformers to produce it)',
    );
  }
  const tokenizer = readJson(tokenizerJson);
  if (!isRecord(tokenizer) || !isRecord(tokenizer['model']))
    throw new TokenizerFileError(tokenizerJson, 'not a tokenizers file (no "model" object)');

  const configPath = join(dir, 'tokenizer_config.json');
  const configFile = existsSync(configPath) ? configPath : null;
  const configRaw = configFile !== null ? readJson(configFile) : {};
  if (!isRecord(configRaw)) throw new TokenizerFileError(configPath, 'expected a JSON object');
  const config = configRaw;

  const specialTokens: Record<string, string> = {};
  const mapPath = join(dir, 'special_tokens_map.json');
  const map = existsSync(mapPath) ? readJson(mapPath) : {};
  for (const key of SPECIAL_TOKEN_KEYS) {
    const s = tokenString(config[key]) ?? (isRecord(map) ? tokenString(map[key]) : null);
    if (s !== null) specialTokens[key] = s;
  }

  let chatTemplate: ChatTemplates | null = null;
  let chatTemplateFile: string | null = null;
  const jinjaPath = join(dir, 'chat_template.jinja');
  if (existsSync(jinjaPath)) {
    try {
      chatTemplate = readFileSync(jinjaPath, 'utf8');
    } catch (err) {
      throw new TokenizerFileError(jinjaPath, `cannot read: ${err instanceof Error ? err.message : String(err)}`);
    }
    chatTemplateFile = jinjaPath;
  } else if (configFile !== null) {
    chatTemplate = templatesOf(configFile, config['chat_template']);
    if (chatTemplate !== null) chatTemplateFile = configFile;
  }

  const added = Array.isArray(tokenizer['added_tokens']) ? tokenizer['added_tokens'] : [];
  const addedTokens: AddedTokenSpec[] = added.filter(isRecord).flatMap((t) =>
    typeof t['id'] === 'number' && typeof t['content'] === 'string' && t['content'] !== ''
      ? [
          {
            id: t['id'],
            content: t['content'],
            lstrip: t['lstrip'] === true,
            rstrip: t['rstrip'] === true,
            singleWord: t['single_word'] === true,
          },
        ]
      : [],
  );
  return {
    tokenizerJson,
    configFile,
    addedTokens,
    normalizer: tokenizer['normalizer'] ?? null,
    preTokenizer: tokenizer['pre_tokenizer'] ?? null,
    chatTemplateFile,
    chatTemplate,
    specialTokens,
    addBosToken: optionalBool(configPath, config, 'add_bos_token'),
    addEosToken: optionalBool(configPath, config, 'add_eos_token'),
    tokenizerClass: typeof config['tokenizer_class'] === 'string' ? config['tokenizer_class'] : null,
  };
}
