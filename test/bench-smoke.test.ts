// Smoke test of the benchmark suite: `npm run bench -- --quick` builds, runs every section at tiny sizes and
// writes a report with each section, its target rows and the machine header. No timing is asserted: speed
// belongs in BENCHMARKS.md, not in tests.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './helpers/paths.js';

const SECTIONS = [
  '1. Event ingest',
  '2. v1_block_key hashing',
  '3. Table memory',
  '4. Relay overhead',
  '5. Offline audit',
  '6. Scrape',
  '7. Simulator',
  '9. Fleet size',
];

describe('npm run bench -- --quick', () => {
  it('writes a report with every section, each row measured or saying why not', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'kvs-bench-')), 'BENCHMARKS.md');
    const r = spawnSync('npm', ['run', 'bench', '--', '--quick', '--out', out], {
      cwd: repoRoot,
      encoding: 'utf8',
      timeout: 280_000,
    });
    expect(r.status, r.stderr.slice(-3000)).toBe(0);
    const text = readFileSync(out, 'utf8');
    expect(text).toContain('QUICK MODE');
    expect(text).toMatch(/\| Node \| v\d+\.\d+\.\d+ \|/);
    expect(text).toMatch(/\| Python \| /);
    expect(text).toMatch(/\| CPU \| .+ \(\d+ cores visible\) \|/);
    for (const title of SECTIONS) expect(text).toContain(`## ${title}`);
    // every table row of a section has a result: a number with a unit, or "not measured: <why>"
    const rows = text
      .split('\n')
      .filter((l) => /^\| (?!measurement|section|machine|---)/.test(l) && l.split('|').length === 8);
    expect(rows.length).toBeGreaterThan(10);
    for (const row of rows) {
      const result = row.split('|')[2]!.trim();
      expect(result, row).toMatch(/\d|not measured: \S/);
    }
    // the correctness checks ran before any hashing figure was taken
    expect(text).toMatch(/Python baseline: \d+\/\d+ vectors reproduced/);
  }, 300_000);
});
