import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import noModuleState from './lint/no-module-state.js';

// JavaScript's own error classes: src throws none of them (a RangeError says what failed, never which code it is)
const BUILT_IN_SUBCLASSES = 'RangeError|TypeError|SyntaxError|ReferenceError|EvalError|URIError|AggregateError';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'build/**', '.bench-build/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    // The core is pure: no I/O, no adapters, no printing.
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*', 'fs', 'http', 'net', 'child_process'], message: 'src/core is pure: no I/O.' },
            {
              group: ['prom-client', 'ws', 'undici', 'commander', 'chalk'],
              message: 'src/core is pure: adapters live in sources/outputs/cli.',
            },
            {
              group: ['**/sources/**', '**/outputs/**', '**/app/**', '**/cli/**', '**/sim/**'],
              message: 'Data flows inward: core imports nothing outside core.',
            },
          ],
        },
      ],
    },
  },
  {
    // The core is reentrant: no state kept between calls at module level (scratch lives in objects callers pass).
    files: ['src/core/**/*.ts'],
    ignores: ['src/core/**/*.test.ts'],
    plugins: { kvsentinel: { rules: { 'no-module-state': noModuleState } } },
    rules: { 'kvsentinel/no-module-state': 'error' },
  },
  {
    // The application layer composes core, sources and outputs; the CLI sits on top of it and nothing below
    // imports it.
    files: ['src/app/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['commander', 'chalk'],
              message: 'src/app returns reports; flags and terminal output belong to src/cli.',
            },
            { group: ['**/cli/**'], message: 'The CLI is a layer over src/app, not beneath it.' },
          ],
        },
      ],
    },
  },
  {
    // The simulator is an adapter the application composes: it imports neither it nor the CLI (sources and outputs
    // have the same rule below, with the line between them).
    files: ['src/sim/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/app/**', '**/cli/**'],
              message: 'Adapters are composed by src/app; they import neither it nor the CLI.',
            },
          ],
        },
      ],
    },
  },
  {
    // A function reads in one sitting: steps get names (issue 25: no function in src over ~120 lines).
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.test.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 120, IIFEs: true }] },
  },
  {
    // Every failure carries a code (src/core/errors.ts) the CLI maps to an exit code and callers branch on.
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.test.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='Error']",
          message: 'Throw a coded error (KvsentinelError or a subclass, src/core/errors.ts), not a plain Error.',
        },
        {
          selector: `NewExpression[callee.name=/^(${BUILT_IN_SUBCLASSES})$/]`,
          message: 'Throw a coded error (KvsentinelError with its code, src/core/errors.ts), not a built-in one.',
        },
        {
          selector: `:matches(ClassDeclaration, ClassExpression)[superClass.name=/^(Error|${BUILT_IN_SUBCLASSES})$/]`,
          message: 'An error class extends KvsentinelError (src/core/errors.ts), so it carries a code.',
        },
      ],
    },
  },
  {
    // Outputs render the state's snapshots; they read no source (shared ports are the core's, core/observe/ports.ts).
    files: ['src/outputs/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/app/**', '**/cli/**'],
              message: 'Adapters are composed by src/app; they import neither it nor the CLI.',
            },
            { group: ['**/sources/**'], message: 'Outputs read the state, never a source: sources observe into it.' },
          ],
        },
      ],
    },
  },
  {
    // Sources observe into the state; they render nothing.
    files: ['src/sources/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/app/**', '**/cli/**'],
              message: 'Adapters are composed by src/app; they import neither it nor the CLI.',
            },
            { group: ['**/outputs/**'], message: 'Sources observe into the state; outputs read it.' },
          ],
        },
      ],
    },
  },
  {
    // Printing belongs to the CLI and its reporters; tests, benches and the simulator's CLI driver may print.
    files: ['src/cli/**/*.ts', 'bench/**/*.ts', 'test/**/*.ts', 'src/**/*.test.ts'],
    rules: { 'no-console': 'off' },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
