// `kvsentinel sim keys | head`: once the reader of stdout (or stderr) is gone, nothing the command prints can reach
// anyone, so it ends quietly as Unix tools do on SIGPIPE, instead of dying on an unhandled EPIPE with a stack trace.
// Node ignores SIGPIPE, so a write to the closed pipe surfaces as an 'error' event on the stream.

/** What the process does when one of its output pipes closes: ends it with the exit code set so far. */
export function endQuietlyOnClosedPipe(exit: (code: number) => void): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
      else throw err;
    });
  }
}
