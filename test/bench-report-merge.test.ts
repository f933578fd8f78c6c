// `npm run bench -- --only id`: the sections run replace theirs in the existing BENCHMARKS.md, every other section and
// its target rows stay as they were, and a line says which section was re-measured alone and when.
import { describe, expect, it } from 'vitest';
import { mergeReport } from '../bench/lib/report-merge.js';

const report = (sections: readonly [string, string, string][]): string =>
  [
    '# kvsentinel benchmarks',
    '',
    '| machine | |',
    '|---|---|',
    '| CPU | x |',
    '',
    '## Targets',
    '',
    '| section | measurement | target | result | status |',
    '|---|---|---|---|---|',
    ...sections.map(([title, , result]) => `| ${title} | m | t | ${result} | ✅ met |`),
    '',
    ...sections.flatMap(([title, body]) => [`## ${title}`, '', body, '']),
  ].join('\n');

describe('mergeReport', () => {
  const old = report([
    ['1. Ingest', 'ingest text', '1 ms'],
    ['4. Relay overhead', 'old relay text', '9 ms'],
    ['5. Audit', 'audit text', '2 ms'],
  ]);
  const fresh = report([['4. Relay overhead', 'new relay text', '3 ms']]);

  it('replaces the re-measured section and its target rows, keeps the others in place', () => {
    const merged = mergeReport(old, fresh, 'on DATE, load 1 2 3.');
    expect(merged).toContain('ingest text');
    expect(merged).toContain('audit text');
    expect(merged).toContain('new relay text');
    expect(merged).not.toContain('old relay text');
    expect(merged).toContain('| 4. Relay overhead | m | t | 3 ms | ✅ met |');
    expect(merged).not.toContain('9 ms');
    expect(merged.indexOf('## 1. Ingest')).toBeLessThan(merged.indexOf('## 4. Relay overhead'));
    expect(merged.indexOf('## 4. Relay overhead')).toBeLessThan(merged.indexOf('## 5. Audit'));
    expect(merged.indexOf('| 1. Ingest |')).toBeLessThan(merged.indexOf('| 4. Relay overhead |'));
    expect(merged.indexOf('| 4. Relay overhead |')).toBeLessThan(merged.indexOf('| 5. Audit |'));
    expect(merged).toContain('> Re-measured alone: 4. Relay overhead — on DATE, load 1 2 3.');
    expect(merged.indexOf('Re-measured alone')).toBeLessThan(merged.indexOf('## Targets'));
  });

  it('a second partial run replaces its own note instead of adding another', () => {
    const twice = mergeReport(mergeReport(old, fresh, 'first.'), fresh, 'second.');
    expect(twice.match(/Re-measured alone: 4\. Relay overhead/g)).toHaveLength(1);
    expect(twice).toContain('— second.');
    expect(twice.match(/## 4\. Relay overhead/g)).toHaveLength(1);
  });

  it('without an existing report, the fresh one is written as is', () => {
    expect(mergeReport(null, fresh, 'x')).toBe(fresh);
    expect(mergeReport('not a report', fresh, 'x')).toBe(fresh);
  });
});
