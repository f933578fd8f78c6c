// The offline audit: replays a recorded bundle into a one-shot state and reports what it saw.
import { buildAuditReport, type AuditReport } from '../../core/report/audit-report.js';
import { auditRecords } from '../../core/report/audit-records.js';
import { Timeline } from '../../core/report/timeline.js';
import type { WireIssue } from '../../core/wire/wire-issue.js';
import { BundleError, readBundleManifest, readBundleRecords } from '../../sources/bundle-reader.js';
import { STATE_PRESETS } from '../state-presets.js';
import type { AuditRun } from './audit-run.js';

/** the first skipped items are named on the progress channel; the rest are counted */
const NAMED_ISSUES = 5;

/** A bundle error names the bundle (the flag that gave it) once, here. */
async function naming<T>(dir: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof BundleError) throw new BundleError(`--bundle ${dir}: ${err.message}`, { cause: err });
    throw err;
  }
}

/** Audits a bundle directory; progress lines go to `progress` (stderr) when given. */
export async function auditBundleRun(dir: string, progress?: (line: string) => void): Promise<AuditRun> {
  const timeline = new Timeline();
  const manifest = await naming(dir, () => readBundleManifest(dir));
  const issues: WireIssue[] = [];
  let malformed = 0;
  const total = manifest.observations;
  const started = Date.now();
  const onIssue = (issue: WireIssue): void => {
    malformed++;
    if (issues.length < NAMED_ISSUES) issues.push(issue);
  };
  const result = await naming(dir, () =>
    auditRecords(readBundleRecords(dir, manifest, { onIssue }), {
      ...STATE_PRESETS.oneShot,
      mode: manifest.mode,
      timeline,
      onProgress: (records) => {
        const of =
          total !== null ? ` of ${total.toLocaleString('en-US')} (${((100 * records) / total).toFixed(0)}%)` : '';
        progress?.(
          `kvsentinel: audited ${records.toLocaleString('en-US')} observations${of} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
        );
      },
    }),
  );
  for (const issue of issues) progress?.(`kvsentinel: skipped ${issue.message}`);
  const completeness = manifest.complete ? '' : ', recording incomplete';
  const report = buildAuditReport(result.snapshot, {
    kind: 'bundle',
    description: `bundle ${dir} (${manifest.mode} mode${completeness})`,
    observations: result.records,
    malformed,
  });
  return { report, samples: timeline.samples, sampleIntervalMs: timeline.intervalMs, input: result.input };
}

export async function auditBundle(dir: string, progress?: (line: string) => void): Promise<AuditReport> {
  return (await auditBundleRun(dir, progress)).report;
}
