// The fault matrix on the virtual-time driver; the rows and the expected findings table are in
// test/helpers/fault-matrix-rows.ts.
import { describe, expect, it } from 'vitest';
import { expectEvidenceAgreesWithSummary } from '../helpers/evidence-agreement.js';
import { auditRow, FAULT_MATRIX } from '../helpers/fault-matrix-rows.js';

describe('fault matrix (virtual-time driver)', () => {
  it.each(FAULT_MATRIX.map((row) => [row.name, row] as const))('%s', (_name, row) => {
    const report = auditRow(row);
    const ids = (severity: string): string[] =>
      report.findings
        .filter((f) => f.severity === severity)
        .map((f) => f.id)
        .sort();
    expect(ids('critical')).toEqual([...row.critical].sort());
    for (const id of row.warnings) expect(ids('warning')).toContain(id);
    if (row.healthy === true) {
      expect(ids('warning')).toEqual([]);
      expect(report.verdict).toBe('healthy');
    }
    expect(report.verdict).toBe(
      row.critical.includes('cache-signal-inert') || row.warnings.includes('cache-signal-inert')
        ? 'inert'
        : row.warnings.includes('evidence-insufficient')
          ? 'unknown'
          : row.critical.length + row.warnings.length > 0
            ? 'degraded'
            : 'healthy',
    );
    // an all-clear needs evidence: evidence-insufficient exactly where the row expects it
    expect(report.findings.some((f) => f.id === 'evidence-insufficient')).toBe(
      row.warnings.includes('evidence-insufficient'),
    );
    expect(report.rule_errors).toBe(0);
    for (const [id, text] of Object.entries(row.says ?? {})) {
      const f = report.findings.find((x) => x.id === id);
      expect(`${f?.summary ?? ''} ${f?.cause ?? ''}`, id).toContain(text);
    }
    // evidence agrees with its own sentence
    for (const f of report.findings) expectEvidenceAgreesWithSummary(f);
    // every critical finding names its cause and a concrete configuration fix
    for (const f of report.findings.filter((x) => x.severity === 'critical')) {
      expect(f.cause).toMatch(/trtllm-wire\.md §/);
      expect(f.fix.length).toBeGreaterThan(20);
    }
  });
});
