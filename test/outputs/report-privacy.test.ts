// The HTML report never carries prompts: audited from a bundle recorded WITH prompts (--include-prompts), not one
// run of a prompt's token ids, no request or correlation id, appears in the file.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeHtmlReport } from '../../src/app/audit/audit-run.js';
import { auditBundleRun } from '../../src/app/audit/bundle-audit.js';
import { readBundleManifest, readBundleRecords } from '../../src/sources/bundle-reader.js';
import { writeSimBundle } from '../helpers/sim-bundle.js';

describe('HTML report privacy', () => {
  it('a bundle recorded with prompts gives a report with no token ids and no request-supplied ids', async () => {
    const root = mkdtempSync(join(tmpdir(), 'kvs-report-privacy-'));
    const dir = join(root, 'bundle');
    await writeSimBundle(dir, 'seed', [], { includePrompts: true });
    const manifest = await readBundleManifest(dir);
    const runs = new Set<string>();
    const ids = new Set<string>();
    let prompts = 0;
    for await (const r of readBundleRecords(dir, manifest)) {
      const o = r.observation;
      if (o.kind !== 'decision') continue;
      ids.add(o.requestId);
      if (o.correlationId !== null) ids.add(o.correlationId);
      if (o.promptTokens === null) continue;
      prompts++;
      // runs of 4 consecutive token ids, as any separator would print them
      for (let i = 0; i + 4 <= o.promptTokens.length; i += 97)
        runs.add(Array.from(o.promptTokens.slice(i, i + 4)).join(','));
    }
    expect(prompts, 'the bundle carries prompts, or this test proves nothing').toBeGreaterThan(100);
    const file = join(root, 'report.html');
    await writeHtmlReport(file, await auditBundleRun(dir));
    const html = readFileSync(file, 'utf8');
    expect(html).toContain('data-verdict="inert"');
    const squeezed = html.replace(/[\s,;[\]]+/g, ',');
    const leaked = [...runs].filter((run) => squeezed.includes(run));
    expect(leaked).toEqual([]);
    const leakedIds = [...ids].filter((id) => id.length >= 6 && html.includes(id));
    expect(leakedIds).toEqual([]);
  });
});
