// `kvsentinel sim keys | head -1`: the reader closes the pipe after one line; the CLI ends quietly with its exit
// code instead of dying on EPIPE with a stack trace.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/paths.js';

describe('a closed stdout pipe', () => {
  it('sim keys | head -1: no EPIPE stack trace, exit 0', async () => {
    const child = spawn(
      'sh',
      ['-c', `"${process.execPath}" "${join(repoRoot, 'dist/cli/main.js')}" sim keys | head -1`],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    await new Promise((resolve) => child.on('close', resolve));
    expect(out).toMatch(/^key\s+seed/);
    expect(err).toBe('');
  });

  it('the CLI itself exits 0 when its reader goes away', async () => {
    const child = spawn(process.execPath, [join(repoRoot, 'dist/cli/main.js'), 'sim', 'keys'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    // read one chunk, then close the pipe as `head` does
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(err).not.toContain('EPIPE');
    expect(code).toBe(0);
  });
});
