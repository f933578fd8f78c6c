import { appendFile, mkdtemp, rename, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileFollower } from './file-follower.js';
import { SourceStatusBoard } from './source-status.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function setup(fromStart: boolean, maxLineBytes = 1024) {
  const dir = await mkdtemp(join(tmpdir(), 'kvs-follow-'));
  dirs.push(dir);
  const path = join(dir, 'log.jsonl');
  const lines: [string, number][] = [];
  const status = new SourceStatusBoard({ sink: { apply: () => undefined }, clock: () => 0 });
  const follower = new FileFollower(
    'f',
    path,
    { status, onLine: (l, n) => lines.push([l, n]) },
    { intervalMs: 1_000_000, fromStart, maxLineBytes },
  );
  return { path, lines, status, follower };
}

describe('FileFollower (tail -F)', () => {
  it('reads appended complete lines, holding a partial last line, across UTF-8 boundaries', async () => {
    const { path, lines, follower } = await setup(true);
    await writeFile(path, 'a\nb');
    await follower.pollNow();
    expect(lines).toEqual([['a', 1]]);
    await appendFile(path, 'c\n\nd€\r\n');
    await follower.pollNow();
    expect(lines).toEqual([
      ['a', 1],
      ['bc', 2],
      ['d€', 4],
    ]);
  });

  it('starts at the end unless asked, reports a missing file and reads it from the start when it appears', async () => {
    const { path, lines, follower, status } = await setup(false);
    await follower.pollNow();
    expect(status.list()[0]).toMatchObject({ up: false, errors: { io: 1 } });
    await writeFile(path, 'x\n');
    await follower.pollNow();
    expect(lines.map((l) => l[0])).toEqual(['x']);
    expect(status.list()[0]?.up).toBe(true);

    const other = await setup(false);
    await writeFile(other.path, 'old\n');
    await other.follower.pollNow();
    await appendFile(other.path, 'new\n');
    await other.follower.pollNow();
    expect(other.lines.map((l) => l[0])).toEqual(['new']);
  });

  it('follows rotation (new inode) and truncation', async () => {
    const { path, lines, follower } = await setup(true);
    await writeFile(path, 'one\n');
    await follower.pollNow();
    await rename(path, `${path}.1`);
    await writeFile(path, 'two\n');
    await follower.pollNow();
    await truncate(path, 0);
    await follower.pollNow();
    await appendFile(path, 'three\n');
    await follower.pollNow();
    expect(lines.map((l) => l[0])).toEqual(['one', 'two', 'three']);
  });

  it('skips and counts a line longer than the limit', async () => {
    const { path, lines, follower, status } = await setup(true, 16);
    await writeFile(path, `${'x'.repeat(40)}\nok\n`);
    await follower.pollNow();
    expect(lines.map((l) => l[0])).toEqual(['ok']);
    expect(status.list()[0]?.badInput['line-too-long']).toBe(1);
  });
});
