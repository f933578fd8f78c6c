// The docs match the code: every kvsentinel configuration example in them passes `serve --config.check`, every
// `kvsentinel …` command line in their shell examples parses with the CLI's own flags, and the figures the README
// quotes from the benchmarks are the ones BENCHMARKS.md records.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Command, CommanderError } from 'commander';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadCliConfig, sourceFlags } from '../../src/cli/serve/source-flags.js';
import { buildProgram } from '../../src/cli/program.js';
import { repoRoot } from '../helpers/paths.js';
import { configFileSchema } from '../../src/app/config/config-schema.js';

const DOCS = [
  'README.md',
  'docs/design.md',
  'docs/event-streams.md',
  'docs/report.md',
  'docs/units.md',
  'src/sim/README.md',
  'deploy/kubernetes/README.md',
  'dashboards/README.md',
  'alerts/runbook.md',
];

/** the top-level keys of kvsentinel's configuration file, read off its schema so a new key is known here */
const CONFIG_KEYS = new Set(Object.keys(configFileSchema.shape));

interface Block {
  readonly where: string;
  readonly lang: string;
  readonly text: string;
}

function blocks(file: string): Block[] {
  const text = readFileSync(join(repoRoot, file), 'utf8');
  const out: Block[] = [];
  for (const m of text.matchAll(/^```(\w*)\n([\s\S]*?)^```/gm)) {
    const line = text.slice(0, m.index).split('\n').length;
    out.push({ where: `${file}:${line}`, lang: m[1] ?? '', text: m[2] ?? '' });
  }
  return out;
}

/** Shell words of one command line (quotes and backslash escapes as sh reads them; no expansion). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote !== null) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && i + 1 < line.length) word += line[++i]!;
      else word += c;
      continue;
    }
    if (c === '#' && word === null) break; // a comment
    if (c === ' ' || c === '\t') {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= '';
    } else if (c === '\\' && i + 1 < line.length) {
      word = (word ?? '') + line[++i]!;
    } else word = (word ?? '') + c;
  }
  if (word !== null) words.push(word);
  return words;
}

/** Every `kvsentinel …` invocation in a shell block: continuation lines joined, `&&` and `|` split. */
function invocations(block: Block): { where: string; args: string[] }[] {
  const joined = block.text.replace(/\\\n\s*/g, ' ');
  const out: { where: string; args: string[] }[] = [];
  for (const line of joined.split('\n')) {
    for (const part of line.split(/&&|\|/)) {
      const words = shellWords(part.trim());
      const at = words[0] === 'npx' ? 1 : 0;
      if (words[at] !== 'kvsentinel') continue;
      out.push({ where: `${block.where}: ${part.trim()}`, args: words.slice(at + 1) });
    }
  }
  return out;
}

/** The CLI with every action a no-op: parsing alone (flags, choices, required options, argument parsers). */
function parsingProgram(): { program: Command; errors: string[] } {
  const program = buildProgram();
  const errors: string[] = [];
  const quiet = (c: Command): void => {
    c.configureOutput({
      writeOut: () => undefined,
      writeErr: (t) => void errors.push(t),
      outputError: (t) => void errors.push(t),
    });
    c.action(() => undefined);
    for (const sub of c.commands) quiet(sub);
  };
  for (const sub of program.commands) quiet(sub);
  program.configureOutput({ writeOut: () => undefined, writeErr: (t) => void errors.push(t) });
  return { program, errors };
}

describe('the docs match the code', () => {
  const all = DOCS.flatMap(blocks);

  it('every kvsentinel configuration example passes serve --config.check', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kvs-doc-config-'));
    const configs = all.filter((b) => {
      if (b.lang !== 'yaml' && b.lang !== 'yml' && b.lang !== 'json') return false;
      const doc = parseYaml(b.text) as unknown;
      if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return false;
      // a block about kvsentinel's file names at least one of its keys (the workers' kv_events_config is not one)
      return Object.keys(doc).some((k) => CONFIG_KEYS.has(k));
    });
    expect(configs.map((b) => b.where)).toEqual(expect.arrayContaining([expect.stringMatching(/^README\.md:/)]));
    for (const [i, b] of configs.entries()) {
      const doc = parseYaml(b.text) as Record<string, unknown>;
      expect(
        Object.keys(doc).filter((k) => !CONFIG_KEYS.has(k)),
        `${b.where}: keys the file does not have`,
      ).toEqual([]);
      const file = join(dir, `example-${i}.${b.lang === 'json' ? 'json' : 'yaml'}`);
      writeFileSync(file, b.text);
      // what --config.check runs: the whole configuration, the tokenizer included
      await expect(loadCliConfig(sourceFlags({ config: file })), b.where).resolves.toBeDefined();
    }
  });

  it('every kvsentinel command line in a shell example parses', async () => {
    const lines = all.filter((b) => b.lang === 'sh' || b.lang === 'bash').flatMap(invocations);
    expect(lines.length).toBeGreaterThan(30);
    for (const { where, args } of lines) {
      const { program, errors } = parsingProgram();
      let failure: string | null = null;
      try {
        await program.parseAsync(['node', 'kvsentinel', ...args]);
      } catch (err) {
        if (!(err instanceof CommanderError) || err.exitCode !== 0) failure = `${String(err)} ${errors.join(' ')}`;
      }
      expect(failure, where).toBeNull();
    }
  });

  it("the README's benchmark figures are BENCHMARKS.md's", () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    const bench = readFileSync(join(repoRoot, 'BENCHMARKS.md'), 'utf8');
    const row = (label: string): string => {
      // the section's own table: the measure first, then its value
      const line = bench.split('\n').find((l) => l.startsWith(`| ${label} |`));
      expect(line, label).toBeDefined();
      return line!.split('|')[2]!.trim();
    };
    const followUp = row('40k-token chat request, follow-up turn: render, p50');
    const thread = row('… through the render thread (relay path), p50');
    const cold = /cold ([\d.]+ ms)/.exec(bench)?.[1];
    const demoPeak = row('demo peak RSS (90 s of traffic, preset seed, the demo workload)');
    for (const figure of [followUp, thread, cold!, demoPeak]) {
      expect(figure).toMatch(/^[\d.,]+ (ms|MiB)$/);
      expect(readme, `README quotes ${figure}`).toContain(figure);
    }
    // no older figure left beside them
    expect(readme).not.toMatch(/~8 ms|~200 ms|0\.51 GB|0\.72 GB/);
  });
});
