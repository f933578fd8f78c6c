// Everything the HTML report shows, as data: the audit (verdict, findings, stats, servers), the plots over the
// window, the configuration kvsentinel inferred. Built from the state the audit ran on; counts and ids only.
import type { AuditReport } from './audit-report.js';
import type { DiagnosisInput } from '../diagnosis/rule.js';
import { inferredConfiguration, type InferredConfiguration } from './inferred-configuration.js';
import { reportCharts, type ChartData } from './report-charts.js';
import type { TimelineSample } from './timeline.js';

export interface VerdictSpan {
  readonly from: number;
  readonly to: number;
  readonly verdict: TimelineSample['verdict'];
}

export interface ReportModel {
  readonly version: string;
  /** when the report was rendered, ms */
  readonly generatedAt: number;
  readonly audit: AuditReport;
  readonly charts: readonly ChartData[];
  /** the verdict over the window, merged into spans */
  readonly verdicts: readonly VerdictSpan[];
  readonly configuration: InferredConfiguration | null;
  /** the sampling step the timeline ended with, ms */
  readonly sampleIntervalMs: number | null;
}

export function verdictSpans(samples: readonly TimelineSample[]): VerdictSpan[] {
  const spans: VerdictSpan[] = [];
  for (const s of samples) {
    const last = spans.at(-1);
    if (last !== undefined && last.verdict === s.verdict) spans[spans.length - 1] = { ...last, to: s.t };
    else spans.push({ from: last?.to ?? s.t, to: s.t, verdict: s.verdict });
  }
  return spans;
}

export function buildReportModel(args: {
  readonly version: string;
  readonly generatedAt: number;
  readonly audit: AuditReport;
  readonly samples: readonly TimelineSample[];
  readonly sampleIntervalMs?: number | null;
  readonly input: DiagnosisInput | null;
}): ReportModel {
  return {
    version: args.version,
    generatedAt: args.generatedAt,
    audit: args.audit,
    charts: reportCharts(args.samples),
    verdicts: verdictSpans(args.samples),
    configuration: args.input === null ? null : inferredConfiguration(args.input),
    sampleIntervalMs: args.sampleIntervalMs ?? null,
  };
}
