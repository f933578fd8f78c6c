// The human audit report: verdict, headline numbers, findings (what, cause, fix), an evidence table, per-server
// numbers and the fixes to apply, in order.
import type { ChalkInstance } from 'chalk';
import { verdictMeaning, type AuditReport } from '../../core/report/audit-report.js';
import type { Severity } from '../../core/diagnosis/finding-catalog.js';
import { evidenceLabel, evidenceValueText } from '../../outputs/evidence-text.js';
import { formatElapsed, formatHeldSince } from '../../outputs/time-text.js';
import type { Finding } from '../../core/diagnosis/finding.js';

function pct(value: number | null): string {
  return value === null ? 'n/a' : `${(value * 100).toFixed(1)}%`;
}

function int(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

function table(rows: readonly (readonly string[])[], c: ChalkInstance, indent = '  '): string[] {
  if (rows.length === 0) return [];
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => (r[col] ?? '').length)));
  return rows.map((r, i) => {
    const line = r.map((cell, col) => (col === r.length - 1 ? cell : cell.padEnd(widths[col]!))).join('  ');
    return indent + (i === 0 ? c.dim(line) : line);
  });
}

function severityLabel(severity: Severity, c: ChalkInstance): string {
  const label = severity.toUpperCase().padEnd(8);
  if (severity === 'critical') return c.red.bold(label);
  if (severity === 'warning') return c.yellow.bold(label);
  return c.cyan(label);
}

function verdictLine(report: AuditReport, c: ChalkInstance): string {
  const label = report.verdict.toUpperCase();
  const colored =
    report.verdict === 'inert'
      ? c.red.bold(label)
      : report.verdict === 'degraded' || report.verdict === 'unknown'
        ? c.yellow.bold(label)
        : c.green.bold(label);
  return `${colored}  ${verdictMeaning(
    report.verdict,
    report.findings.some((f) => f.severity === 'critical'),
  )}`;
}

function findingBlock(f: Finding, c: ChalkInstance, now: number): string[] {
  const where = f.servers.length > 0 ? c.dim(` [${f.servers.join(', ')}]`) : '';
  return [
    `  ${severityLabel(f.severity, c)} ${c.bold(f.id)}${where}`,
    `    ${f.summary}`,
    `    ${c.dim('cause:')} ${f.cause}`,
    `    ${c.dim('fix:  ')} ${c.green(f.fix)}`,
    `    ${c.dim('since:')} ${formatHeldSince(f.since, typeof f.evidence['window_to_ms'] === 'number' ? f.evidence['window_to_ms'] : null, now)}`,
  ];
}

/** `now`: what the findings' "since" is relative to (when the report is printed) */
export function renderText(report: AuditReport, c: ChalkInstance, now: number = Date.now()): string {
  const s = report.stats;
  const lines: string[] = [];
  lines.push(
    c.bold('kvsentinel audit') +
      c.dim(
        ` — ${report.source.description}, ${int(report.source.observations)} observations` +
          (s.window_seconds !== null ? `, ${formatElapsed(s.window_seconds * 1000)}` : ''),
      ),
  );
  lines.push('');
  lines.push(`Verdict: ${verdictLine(report, c)}`);
  const headline = [
    `requests ${int(s.requests)}`,
    `cache hit ${pct(s.cache_hit_ratio)}`,
    `oracle ${pct(s.oracle_hit_ratio)}${s.oracle_basis === 'sticky-ideal' ? ' (sticky ideal)' : ''}`,
    `turn scatter ${pct(s.turn_scatter_ratio)}`,
    `stickiness ${pct(s.stickiness)}`,
  ];
  if (s.tokens_lost_per_second !== null) headline.push(`lost ${int(s.tokens_lost_per_second)} prompt tokens/s`);
  lines.push(`Stats:   ${headline.join(c.dim(' · '))}`);
  const st = report.steady_state;
  if (st !== undefined)
    lines.push(
      `Steady:  ${[`cache hit ${c.bold(pct(st.cache_hit_ratio))}`, `stickiness ${pct(st.stickiness)}`].join(c.dim(' · '))}` +
        ` over the ${int(st.requests)} requests of the last ${formatElapsed(st.seconds * 1000)}, after a warm-up of ` +
        `${int(st.warmup_requests)} requests (${formatElapsed(st.warmup_seconds * 1000)}; the stats above include it)`,
    );
  if (report.source.malformed > 0)
    lines.push(c.yellow(`         ${int(report.source.malformed)} malformed input lines skipped`));
  if (report.rule_errors > 0)
    lines.push(c.yellow(`         ${report.rule_errors} rule evaluations failed: some findings may be missing`));
  for (const note of report.notes) lines.push(c.dim(`  note   ${note}`));
  lines.push('');
  if (report.findings.length === 0) {
    lines.push(c.green('No findings.'));
  } else {
    lines.push(c.bold(`Findings (${report.findings.length})`));
    for (const f of report.findings) lines.push(...findingBlock(f, c, now), '');
    lines.push(c.bold('Evidence'));
    const rows: string[][] = [['finding', 'measure', 'value']];
    for (const f of report.findings) {
      for (const [key, value] of Object.entries(f.evidence)) {
        if (key === 'window_from_ms' || key === 'window_to_ms') continue;
        rows.push([f.id, evidenceLabel(key), evidenceValueText(key, value)]);
      }
    }
    lines.push(...table(rows, c), '');
  }
  if (report.servers.length > 0) {
    lines.push(c.bold('Servers'));
    const rows: string[][] = [
      ['server', 'requests', 'cache hit', 'oracle cached', 'router table', 'polls', 'events', 'gaps', 'resets'],
    ];
    for (const r of report.servers) {
      rows.push([
        r.server,
        int(r.requests),
        pct(r.cache_hit_ratio),
        int(r.oracle_cached_tokens),
        int(r.router_table_blocks),
        int(r.router_polls),
        int(r.events),
        int(r.event_gaps),
        int(r.event_resets),
      ]);
    }
    lines.push(...table(rows, c), '');
  }
  if (report.findings.length > 0) {
    lines.push(c.bold('Fixes'));
    report.findings.forEach((f, i) => lines.push(`  ${i + 1}. ${c.bold(f.id)}: ${f.fix}`));
    lines.push('');
  }
  return `${lines.join('\n')}\n`;
}
