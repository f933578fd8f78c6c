import fc from 'fast-check';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LineSplitter, readBundleRecords } from './bundle-reader.js';
import type { BundleManifest } from '../core/bundle/bundle-manifest.js';
import type { WireIssue } from '../core/wire/wire-issue.js';

function splitAll(chunks: readonly Buffer[]): string[] {
  const splitter = new LineSplitter();
  return [...chunks.flatMap((c) => splitter.push(c)), ...splitter.end()];
}

/** The reference: the whole input decoded at once, split on LF, one CR before each LF dropped. */
function reference(text: string): string[] {
  const lines = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  if (text.endsWith('\n') || text === '') lines.pop();
  return lines;
}

describe('LineSplitter', () => {
  it('splits LF and CRLF lines, keeps a last line without a newline, and lines spanning chunks', () => {
    const b = (s: string) => Buffer.from(s, 'utf8');
    expect(splitAll([b('a\nbb\r\nccc')])).toEqual(['a', 'bb', 'ccc']);
    expect(splitAll([b('a'), b('b'), b('c\n'), b('\nd\r'), b('\n')])).toEqual(['abc', '', 'd']);
    expect(splitAll([])).toEqual([]);
  });

  it('decodes multi-byte UTF-8 split across chunks exactly, at any chunk boundary', () => {
    const text = 'ä€😀\nx\r\n日本語 line\n\nlast 😀';
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: Buffer.byteLength(text) }), { maxLength: 6 }), (cuts) => {
        const bytes = Buffer.from(text, 'utf8');
        const points = [...new Set([0, ...cuts, bytes.length])].sort((x, y) => x - y);
        const chunks = points.slice(1).map((end, i) => bytes.subarray(points[i], end));
        expect(splitAll(chunks)).toEqual(reference(text));
      }),
    );
  });
});

describe('readBundleRecords', () => {
  it('yields records in order and reports a malformed line with its line number', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kvs-bundle-reader-'));
    try {
      const outcome = (id: string) =>
        JSON.stringify({
          kind: 'outcome',
          ts: 1,
          requestId: id,
          server: 'a',
          ok: true,
          promptTokens: 3,
          cachedTokens: 0,
          latencyMs: null,
        });
      writeFileSync(join(dir, 'observations.jsonl'), `${outcome('r1')}\r\n\n{"kind":\n${outcome('r2')}`);
      const issues: WireIssue[] = [];
      const manifest = { key_history: 16 } as unknown as BundleManifest;
      const ids: string[] = [];
      for await (const r of readBundleRecords(dir, manifest, { onIssue: (i) => issues.push(i) })) {
        if (r.observation.kind === 'outcome') ids.push(r.observation.requestId);
      }
      expect(ids).toEqual(['r1', 'r2']);
      expect(issues.map((i) => i.message.slice(0, 7))).toEqual(['line 3:']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
