import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hashV1Chain } from '../../src/core/hashing/index.js';
import { runCli } from '../helpers/run-cli.js';

describe('kvsentinel hash', () => {
  it('prints the chained v1_block_key of each BLOCK', async () => {
    const run = await runCli(['hash', '1,2,3,4', '5,6']);
    expect(run).toMatchObject({ code: 0, stdout: '924206229973855\n6875034662206558884\n' });
  });

  it('mixes the salt id into the first block', async () => {
    const run = await runCli(['hash', '--salt-id', '123', '1,2,3,4', '5,6']);
    expect(run.stdout).toBe('6280297290684427985\n18177682803760873588\n');
  });

  it('chunks a prompt like the router, in v2_sha256 hex', async () => {
    const run = await runCli([
      'hash',
      '--prompt',
      '--tokens-per-block',
      '4',
      '--algo',
      'v2_sha256',
      '1,2,3,4,5,6,7,8,9,10',
    ]);
    expect(run.stdout.trim().split('\n')).toEqual([
      'e432228522a304ab556d66e6e40979ad05575f28b19b554264dd3c6277aaf073',
      '756b1d258c63ccc0cbd6284ab33b043c81175086163f9d2821f5764079efb75c',
      '2c2a73c72b0bccbf74a5d46d131499ca726b1d2a650836cb548a10fb3c8acf2e',
    ]);
  });

  it('reads a long prompt from --tokens-file (whitespace and commas)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kvs-hash-'));
    const tokens = Uint32Array.from({ length: 100_000 }, (_, i) => (i * 2_654_435_761) >>> 0);
    const file = join(dir, 'prompt.txt');
    writeFileSync(
      file,
      Array.from(tokens)
        .map((t, i) => (i % 10 === 9 ? `${t}\n` : `${t}, `))
        .join(''),
    );
    const run = await runCli(['hash', '--prompt', '--tokens-per-block', '128', '--tokens-file', file]);
    const expected = Array.from(hashV1Chain(tokens.subarray(0, tokens.length - 1), 128), String);
    expect(run.code).toBe(0);
    expect(run.stdout.trim().split('\n')).toEqual(expected);
  });

  it.each([
    [['hash', '1,x'], /BLOCK 1: 'x' at offset 2 is not a token id/],
    [['hash', '--salt-id', '-1', '1'], /--salt-id: '-1' is not an unsigned 64-bit integer/],
    [['hash', '--salt-id', '18446744073709551616', '1'], /exceeds 2\^64-1/],
    [['hash', '--prompt', '1,2,3'], /--prompt needs --tokens-per-block/],
    [['hash', '--prompt', '--tokens-per-block', '0', '1'], /--tokens-per-block: '0' is not a positive integer/],
    [['hash'], /no BLOCK given/],
    [
      ['hash', '--prompt', '--tokens-per-block', '4', '--tokens-file', '/nonexistent/p.txt'],
      /--tokens-file \/nonexistent\/p.txt: cannot read it: no such file or directory/,
    ],
    [['hash', '--algo', 'md5', '1'], /Allowed choices are v1_block_key, v2_sha256, v2_sha256_64/],
  ])('rejects %j with exit 2 and a message naming the input', async (args, message) => {
    const run = await runCli(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stdout).toBe('');
  });
});
