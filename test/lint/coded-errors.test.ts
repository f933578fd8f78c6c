// The rule that keeps every failure in src coded (eslint.config.js, no-restricted-syntax): a plain `new Error(` is
// reported in src outside its tests, and so are JavaScript's other error classes and classes extending them; a coded
// error is not, and tests may still build plain errors.
import { ESLint, Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

type RuleEntry = Linter.RuleEntry;

async function rulesOf(file: string): Promise<Record<string, RuleEntry>> {
  // the configuration only (linting a file type-aware takes a minute on a loaded machine; `npm run lint` does that)
  const eslint = new ESLint({ cwd: process.cwd() });
  return ((await eslint.calculateConfigForFile(file)) as { rules: Record<string, RuleEntry> }).rules;
}

function problems(code: string, rule: RuleEntry): string[] {
  const linter = new Linter({ configType: 'flat' });
  return linter
    .verify(
      code,
      [
        {
          files: ['**/*.ts'],
          languageOptions: { parser: tseslint.parser, sourceType: 'module', ecmaVersion: 'latest' },
          rules: { 'no-restricted-syntax': rule },
        },
      ],
      'example.ts',
    )
    .map((m) => `${m.line}: ${m.message}`);
}

describe('coded errors in src', () => {
  it('reports a plain new Error in src, not a coded one, and leaves tests alone', async () => {
    const rule = (await rulesOf('src/app/record.ts'))['no-restricted-syntax'];
    expect(rule).toBeDefined();
    const code = [
      "import { KvsentinelError } from './errors.js';",
      "export function a(): never { throw new Error('plain'); }",
      "export function b(): never { throw new KvsentinelError('internal', 'coded'); }",
      'export const c = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));',
      "export const d = new RangeError('a built-in subclass says what failed');",
      'export class Problem extends Error {}',
      'export class Coded extends KvsentinelError {}',
      "export const e = (): TypeError => new TypeError('not text');",
      'export const F = class extends SyntaxError {};',
    ].join('\n');
    const plain = 'Throw a coded error (KvsentinelError or a subclass, src/core/errors.ts), not a plain Error.';
    const builtIn = 'Throw a coded error (KvsentinelError with its code, src/core/errors.ts), not a built-in one.';
    const subclass = 'An error class extends KvsentinelError (src/core/errors.ts), so it carries a code.';
    expect(problems(code, rule!)).toEqual([
      `2: ${plain}`,
      `4: ${plain}`,
      `5: ${builtIn}`,
      `6: ${subclass}`,
      `8: ${builtIn}`,
      `9: ${subclass}`,
    ]);
    for (const file of ['src/core/wire/json-scanner.ts', 'src/sim/live/live-cluster.ts', 'src/cli/program.ts'])
      expect((await rulesOf(file))['no-restricted-syntax'], file).toEqual(rule);
    expect((await rulesOf('src/core/errors.test.ts'))['no-restricted-syntax']).toBeUndefined();
    expect((await rulesOf('test/cli/serve.test.ts'))['no-restricted-syntax']).toBeUndefined();
  });
});
