// `audit --json`: the report as one JSON object (docs/design.md §7), newline-terminated.
import type { AuditReport } from '../../core/report/audit-report.js';

export function renderJson(report: AuditReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
