// A known, user-facing failure: the CLI prints its message on one line and exits 2.
export class CliError extends Error {
    name = 'CliError';
}
export const EXIT_OK = 0;
export const EXIT_FINDINGS = 1;
export const EXIT_USAGE = 2;
//# sourceMappingURL=cli-error.js.map