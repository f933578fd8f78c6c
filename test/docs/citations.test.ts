// Every reference kvsentinel cites — in finding causes, --help texts, comments and the operator pages — must
// ship with it: the cited file exists in the repository and so does every cited section (§N or §N.M).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/paths.js';
import { runCli } from '../helpers/run-cli.js';

interface Citation {
  readonly where: string;
  readonly file: string;
  readonly sections: string[];
}

// a markdown file name, then optionally § refs joined by "/", ",", "and"
const CITATION = /([A-Za-z0-9_./-]*\.md)((?:\s*(?:\/|,|and)?\s*§\s?\d+(?:\.\d+)*)*)/g;

function citationsIn(text: string, where: string): Citation[] {
  const out: Citation[] = [];
  for (const m of text.matchAll(CITATION)) {
    const file = m[1]!.replace(/^\.\//, '');
    if (file.startsWith('http') || file.includes('//')) continue;
    const sections = [...(m[2] ?? '').matchAll(/§\s?(\d+(?:\.\d+)*)/g)].map((s) => s[1]!);
    out.push({ where, file, sections });
  }
  return out;
}

function walk(dir: string, keep: (path: string) => boolean): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : walk(path, keep);
    return keep(path) ? [path] : [];
  });
}

/** Section numbers a markdown file defines: headings like `## 7. Title` or `### 7.1 Title`. */
function sectionsOf(file: string): Set<string> {
  const text = readFileSync(join(repoRoot, file), 'utf8');
  return new Set([...text.matchAll(/^#{1,6}\s+(\d+(?:\.\d+)*)\.?\s/gm)].map((m) => m[1]!));
}

function unresolved(citations: readonly Citation[]): string[] {
  const problems: string[] = [];
  for (const c of citations) {
    if (!existsSync(join(repoRoot, c.file))) {
      problems.push(
        `${c.where}: cites ${c.file}, which is not in the repository (cite it by its path from the repository root)`,
      );
      continue;
    }
    const defined = sectionsOf(c.file);
    for (const s of c.sections)
      if (!defined.has(s)) problems.push(`${c.where}: cites ${c.file} §${s}, which has no such section`);
  }
  return problems;
}

const sourceFiles = [
  ...walk(join(repoRoot, 'src'), (p) => p.endsWith('.ts') || p.endsWith('.md')),
  ...walk(join(repoRoot, 'bench'), (p) => p.endsWith('.ts')),
  ...walk(join(repoRoot, 'docs'), (p) => p.endsWith('.md')),
  ...['README.md', 'RELIABILITY.md', 'BENCHMARKS.md', 'alerts/runbook.md'].map((f) => join(repoRoot, f)),
];

describe('shipped references', () => {
  it('the reference files exist and are numbered', () => {
    for (const s of ['1.2', '1.3', '1.4', '2', '2.1', '3', '4', '5', '6', '7', '7.1', '7.2', '7.3', '7.4', '7.6'])
      expect(sectionsOf('docs/trtllm-wire.md').has(s), `trtllm-wire §${s}`).toBe(true);
    for (const s of ['1', '3', '4', '5', '6', '7', '8', '9', '10'])
      expect(sectionsOf('docs/design.md').has(s), `design §${s}`).toBe(true);
  });

  it('the scanner finds a missing file and a missing section (so a clean scan means something)', () => {
    const found = citationsIn("cause: 'docs/trtllm-wire.md §7.1/§7.2 and §99' and nowhere.md §1", 'probe');
    expect(found).toEqual([
      { where: 'probe', file: 'docs/trtllm-wire.md', sections: ['7.1', '7.2', '99'] },
      { where: 'probe', file: 'nowhere.md', sections: ['1'] },
    ]);
    expect(unresolved(found)).toEqual([
      'probe: cites docs/trtllm-wire.md §99, which has no such section',
      'probe: cites nowhere.md, which is not in the repository (cite it by its path from the repository root)',
    ]);
  });

  it('every citation in src/, bench/, docs/ and the operator pages resolves to a shipped file and section', () => {
    const citations = sourceFiles.flatMap((path) =>
      readFileSync(path, 'utf8')
        .split('\n')
        .flatMap((line, i) => citationsIn(line, `${relative(repoRoot, path)}:${i + 1}`)),
    );
    expect(citations.filter((c) => c.file.endsWith('trtllm-wire.md')).length).toBeGreaterThan(20);
    expect(unresolved(citations)).toEqual([]);
  });

  it('every finding cause cites a section of docs/trtllm-wire.md or says plainly what happened', () => {
    const rules = walk(join(repoRoot, 'src/core/diagnosis/rules'), (p) => p.endsWith('.ts') && !p.endsWith('.test.ts'));
    for (const rule of rules) {
      for (const m of readFileSync(rule, 'utf8').matchAll(/cause:\s*(['`"])(.*?)\1/g)) {
        const cited = citationsIn(m[2]!, relative(repoRoot, rule));
        for (const c of cited) expect(c.file, `${rule}: ${m[2]}`).toMatch(/^docs\//);
      }
    }
  });

  it('the --help of every command cites only shipped files and sections', async () => {
    const commands = [
      [],
      ['demo'],
      ['serve'],
      ['audit'],
      ['record'],
      ['tail'],
      ['hash'],
      ['sim', 'run'],
      ['sim', 'serve'],
    ];
    const citations: Citation[] = [];
    for (const args of commands) {
      const run = await runCli([...args, '--help']);
      expect(run.code, args.join(' ')).toBe(0);
      // commander wraps help lines: join them so a citation split over two lines is read whole
      citations.push(...citationsIn(run.stdout.replace(/\n\s+/g, ' '), `kvsentinel ${args.join(' ')} --help`));
    }
    expect(citations.some((c) => c.file === 'docs/design.md' && c.sections.includes('7'))).toBe(true);
    expect(unresolved(citations)).toEqual([]);
  });

  it('the README explains "the bug report" as upstream issue #14882', () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    expect(readme).toMatch(/bug report[^\n]*NVIDIA\/TensorRT-LLM#14882|#14882[^\n]*bug report/);
  });
});
