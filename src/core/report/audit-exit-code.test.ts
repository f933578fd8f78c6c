// The audit's exit code (docs/design.md §7): a finding about the router is 1, a source it could not reach 5 (when
// that is the only kind at --fail-on), too little evidence 3, else 0; --fail-on decides what counts.
import { describe, expect, it } from 'vitest';
import type { Finding } from '../diagnosis/finding.js';
import { auditExitCode, type AuditReport } from './audit-report.js';

function finding(id: Finding['id'], severity: Finding['severity']): Finding {
  return { id, severity, servers: [], summary: id, evidence: {}, cause: '', fix: '', since: 0 };
}

function report(verdict: AuditReport['verdict'], findings: readonly Finding[]): AuditReport {
  return { verdict, findings } as Partial<AuditReport> as AuditReport;
}

describe('auditExitCode', () => {
  const unreachable = finding('source-unreachable', 'warning');
  const insufficient = finding('evidence-insufficient', 'warning');
  const mismatch = finding('hash-mismatch', 'critical');

  it('1 for a finding about the router at --fail-on, whatever else is found', () => {
    expect(auditExitCode(report('degraded', [mismatch, unreachable, insufficient]), 'warning')).toBe(1);
    expect(auditExitCode(report('degraded', [mismatch]), 'critical')).toBe(1);
  });

  it('5 when source-unreachable is the only finding at --fail-on, before evidence-insufficient', () => {
    expect(auditExitCode(report('degraded', [unreachable]), 'warning')).toBe(5);
    expect(auditExitCode(report('unknown', [unreachable, insufficient]), 'warning')).toBe(5);
    // below --fail-on it does not count: the evidence decides
    expect(auditExitCode(report('degraded', [unreachable]), 'critical')).toBe(0);
    expect(auditExitCode(report('unknown', [unreachable, insufficient]), 'critical')).toBe(3);
  });

  it('3 without evidence for an all-clear, 0 with it', () => {
    expect(auditExitCode(report('unknown', [insufficient]), 'critical')).toBe(3);
    expect(auditExitCode(report('healthy', []), 'info')).toBe(0);
  });
});
