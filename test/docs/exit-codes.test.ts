// One exit-code table (src/cli/exit-codes.ts): every known error's code is one the --help epilog and docs/design.md §7 list, and the two
// list the same codes (an internal error has none: it is rethrown with its stack).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/core/errors.js';
import { EXIT_CODES_HELP, EXIT_USAGE, exitCodeFor } from '../../src/cli/exit-codes.js';
import { repoRoot } from '../helpers/paths.js';

const helpCodes = [...EXIT_CODES_HELP.matchAll(/^ {2}(\d) {2}/gm)].map((m) => Number(m[1]));
const design = readFileSync(join(repoRoot, 'docs/design.md'), 'utf8');
const designCodes = [...design.matchAll(/^\| (\d) \| /gm)].map((m) => Number(m[1]));

describe('exit codes', () => {
  it('--help and docs/design.md §7 list the same codes, 0 to 6', () => {
    expect(helpCodes).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(designCodes).toEqual(helpCodes);
  });

  it('every error code exits with a listed code, usage with 2, a bug with none', () => {
    for (const code of ERROR_CODES) {
      const exit = exitCodeFor(code);
      if (exit !== null) expect(helpCodes, code).toContain(exit);
    }
    expect(exitCodeFor('usage')).toBe(EXIT_USAGE);
    expect(exitCodeFor('config-invalid')).toBe(4);
    expect(exitCodeFor('source-unreachable')).toBe(5);
    expect(exitCodeFor('write-failed')).toBe(6);
    expect(exitCodeFor('internal')).toBeNull();
  });
});
