// The lint rule that keeps src/core reentrant (lint/no-module-state.js) really fires: on each pattern it exists for,
// through the project's own eslint.config.js, and not on the immutable constants and load-time tables it allows.
import { ESLint, Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import noModuleState from '../../lint/no-module-state.js';

function problems(code: string): string[] {
  const linter = new Linter({ configType: 'flat' });
  const messages = linter.verify(
    code,
    [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser, sourceType: 'module', ecmaVersion: 'latest' },
        plugins: { kvsentinel: { rules: { 'no-module-state': noModuleState } } },
        rules: { 'kvsentinel/no-module-state': 'error' },
      },
    ],
    'example.ts',
  );
  return messages.map((m) => `${m.line}: ${m.message}`);
}

describe('kvsentinel/no-module-state', () => {
  it('reports top-level let and var, exported or not', () => {
    expect(
      problems('let pos = 0;\nexport let walkEnd = 0;\nvar legacy = 1;\nexport function f(): number { return pos; }'),
    ).toEqual([
      "1: top-level 'let pos' is state shared by every caller; keep it in an object the caller passes",
      "2: top-level 'let walkEnd' is state shared by every caller; keep it in an object the caller passes",
      "3: top-level 'var legacy' is state shared by every caller; keep it in an object the caller passes",
    ]);
  });

  it('reports writes from functions through module-level objects, collections and typed arrays', () => {
    const code = [
      'export const cursor = { pos: 0 };',
      'const scratch = new Uint32Array(1024);',
      'const cache = new Map<string, number>();',
      'const seen = new Set<number>();',
      'const list: number[] = [];',
      'export function step(i: number): void {',
      '  cursor.pos = i;',
      '  scratch[i] = 1;',
      '  cursor.pos++;',
      '  cache.set("k", i);',
      '  seen.add(i);',
      '  list.push(i);',
      '  scratch.fill(0);',
      '}',
      'export const arrow = (): void => { delete (cursor as { pos?: number }).pos; };',
    ].join('\n');
    expect(problems(code)).toEqual([
      "7: this function assigns to module-level 'cursor': scratch shared by every caller; keep it in an object the caller passes",
      "8: this function assigns to module-level 'scratch': scratch shared by every caller; keep it in an object the caller passes",
      "9: this function updates module-level 'cursor': scratch shared by every caller; keep it in an object the caller passes",
      "10: this function calls .set() on module-level 'cache': scratch shared by every caller; keep it in an object the caller passes",
      "11: this function calls .add() on module-level 'seen': scratch shared by every caller; keep it in an object the caller passes",
      "12: this function calls .push() on module-level 'list': scratch shared by every caller; keep it in an object the caller passes",
      "13: this function calls .fill() on module-level 'scratch': scratch shared by every caller; keep it in an object the caller passes",
      "15: this function deletes from module-level 'cursor': scratch shared by every caller; keep it in an object the caller passes",
    ]);
  });

  it('reports writes through an imported binding and a class static, and stateful regular expressions', () => {
    const code = [
      "import { cursor } from './scan.js';",
      'class Counter { static count = 0; }',
      'const RUN = /ab/y;',
      'const ALL = /ab/g;',
      'const PLAIN = /ab/;',
      'export function f(): void { cursor.pos = 1; Counter.count += 1; }',
      'export { RUN, ALL, PLAIN, Counter };',
    ].join('\n');
    expect(problems(code)).toEqual([
      "3: top-level regular expression with the 'y' flag: its lastIndex is state shared by every caller",
      "4: top-level regular expression with the 'g' flag: its lastIndex is state shared by every caller",
      "6: this function assigns to module-level 'cursor': scratch shared by every caller; keep it in an object the caller passes",
      "6: this function assigns to module-level 'Counter': scratch shared by every caller; keep it in an object the caller passes",
    ]);
  });

  it('allows constants, tables filled while the module loads, reads, and state in objects callers own', () => {
    const code = [
      'const DECODE = new Int16Array(128).fill(-1);',
      'for (let i = 0; i < 10; i++) DECODE[48 + i] = i;',
      'const NAMES = new Map([["a", 1]]);',
      'export const LIMIT = 256;',
      'export class Scanner {',
      '  pos = 0;',
      '  readonly scratch = new Uint32Array(16);',
      '  step(i: number): number { this.pos = i; this.scratch[0] = i; return DECODE[i]! + (NAMES.get("a") ?? 0); }',
      '}',
      'export function local(): number[] { const out: number[] = []; out.push(LIMIT); let n = 0; n++; return out; }',
    ].join('\n');
    expect(problems(code)).toEqual([]);
  });

  it('is on for src/core in the project configuration, and off for its tests', async () => {
    // the configuration only (linting a file type-aware takes a minute on a loaded machine; `npm run lint` does that)
    const eslint = new ESLint({ cwd: process.cwd() });
    const rulesOf = async (file: string): Promise<Record<string, unknown>> =>
      ((await eslint.calculateConfigForFile(file)) as { rules: Record<string, unknown> }).rules;
    expect((await rulesOf('src/core/wire/json-scanner.ts'))['kvsentinel/no-module-state']).toEqual([2]);
    expect((await rulesOf('src/core/wire/lossless-json.test.ts'))['kvsentinel/no-module-state']).toBeUndefined();
    expect((await rulesOf('src/sources/relay/worker-relay.ts'))['kvsentinel/no-module-state']).toBeUndefined();
  });
});
