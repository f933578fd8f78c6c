// What an audit returns to whoever shows it: the report, and what the HTML report plots (the timeline over the
// window and the state's final diagnosis input).
import type { AuditReport } from '../../core/report/audit-report.js';
import type { DiagnosisInput } from '../../core/diagnosis/rule.js';
import { errorMessage, KvsentinelError } from '../../core/errors.js';
import { buildReportModel } from '../../core/report/report-model.js';
import type { TimelineSample } from '../../core/report/timeline.js';
import { writeReportFile } from '../../outputs/report/report-file.js';
import type { SourceStatus } from '../../sources/source-status.js';
import { VERSION } from '../version.js';

export interface AuditRun {
  readonly report: AuditReport;
  readonly samples: readonly TimelineSample[];
  readonly sampleIntervalMs: number | null;
  readonly input: DiagnosisInput | null;
}

/** Writes the self-contained HTML report of an audit run (--report FILE). */
export async function writeHtmlReport(path: string, run: AuditRun): Promise<void> {
  const model = buildReportModel({
    version: VERSION,
    generatedAt: Date.now(),
    audit: run.report,
    samples: run.samples,
    sampleIntervalMs: run.sampleIntervalMs,
    input: run.input,
  });
  try {
    await writeReportFile(path, model);
  } catch (err) {
    throw new KvsentinelError('write-failed', `--report ${path}: cannot write the report: ${errorMessage(err)}`, {
      cause: err,
    });
  }
}

/** Malformed items the sources skipped, summed over every source. */
export function malformedInputs(sources: readonly Pick<SourceStatus, 'badInput'>[]): number {
  return sources.reduce((n, s) => n + Object.values(s.badInput).reduce((a, b) => a + b, 0), 0);
}
