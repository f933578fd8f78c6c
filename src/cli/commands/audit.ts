// `kvsentinel audit`: one-shot diagnosis, offline from a recorded bundle (--bundle DIR), attached to a running
// sidecar (--attach URL: it keeps relaying when the audit ends) or live from the daemon's own sources (their flags
// plug in through `liveAudit`; relay ports it opens close when it ends, and it says so). Prints the text report or
// --json; exit 0 healthy, 1 findings at or above --fail-on, 3 evidence insufficient, 5 a source unreachable, and the
// CLI's codes for errors (docs/design.md §7).
import { Option, type Command } from 'commander';
import { runAttachedAudit } from '../../app/audit/attached-audit.js';
import { auditBundleRun } from '../../app/audit/bundle-audit.js';
import { parseDuration } from '../../app/config/serve-config.js';
import { writeHtmlReport, type AuditRun } from '../../app/audit/audit-run.js';
import { auditExitCode, type AuditReport } from '../../core/report/audit-report.js';
import { SEVERITIES, type Severity } from '../../core/diagnosis/finding-catalog.js';
import { CliError } from '../cli-error.js';
import { colorFor } from '../reporters/color.js';
import { renderJson } from '../reporters/json.js';
import { renderText } from '../reporters/text.js';
import { addAttachOptions, attachTarget, type AttachOptionValues } from '../serve/attach-flags.js';
import type { SourceOptionValues } from '../serve/source-flags.js';

export interface AuditCommandOptions {
  bundle?: string;
  json?: boolean;
  failOn: Severity;
  progress?: boolean;
  report?: string;
}

/** Prints the report and returns the exit code. */
export function emitAuditReport(report: AuditReport, options: { json?: boolean; failOn: Severity }): number {
  process.stdout.write(options.json === true ? renderJson(report) : renderText(report, colorFor(process.stdout)));
  return auditExitCode(report, options.failOn);
}

/** Live audit hook: the daemon's sources register it (flags, --duration); null until they do. */
export type LiveAudit = (
  command: Command,
  options: Record<string, unknown>,
  progress: (line: string) => void,
) => Promise<AuditRun & { readonly finish: () => Promise<void> }>;

export function registerAuditCommand(
  program: Command,
  live: { addOptions: (cmd: Command) => void; run: LiveAudit } | null = null,
): void {
  const command = program
    .command('audit')
    .description(
      'one-shot diagnosis: offline from a recorded bundle (--bundle DIR) or live from the sources for --duration',
    )
    .option('--bundle <dir>', 'audit a bundle written by `kvsentinel record --out DIR`')
    .option('--json', 'print one JSON object (docs/design.md §7) instead of the text report')
    .addOption(
      new Option(
        '--fail-on <severity>',
        'exit 1 when a finding is at or above this severity (exit 3: none is, but the evidence is insufficient for an all-clear; 5: a source was unreachable)',
      )
        .choices(SEVERITIES)
        .default('warning'),
    )
    .option('--no-progress', 'no progress lines on stderr')
    .option(
      '--report <file.html>',
      'also write a self-contained HTML report (verdict, findings, plots over the window) to this file',
    );
  live?.addOptions(command);
  addAttachOptions(command);
  command.action(async (options: AuditCommandOptions & Record<string, unknown>, cmd: Command) => {
    const attach = attachTarget(options as AttachOptionValues & SourceOptionValues);
    if (attach !== null && options.bundle !== undefined)
      throw new CliError('give --bundle DIR or --attach URL, not both');
    const progress =
      options.progress === false || process.stderr.isTTY !== true
        ? (): void => undefined
        : (line: string): void => void process.stderr.write(`${line}\n`);
    const report = async (run: AuditRun): Promise<void> => {
      if (options.report !== undefined) {
        await writeHtmlReport(options.report, run);
        progress(`kvsentinel: HTML report written to ${options.report}`);
      }
      process.exitCode = emitAuditReport(run.report, options);
    };
    if (options.bundle !== undefined) {
      await report(await auditBundleRun(options.bundle, progress));
    } else if (attach !== null) {
      // a running sidecar's observations for the window: it keeps its relay ports when this ends
      const durationMs = parseDuration('--duration', options['duration'] ?? '30s');
      await report(
        await runAttachedAudit(attach.url, {
          durationMs,
          bearerToken: attach.bearerToken,
          progress,
          notice: (line) => void process.stderr.write(`${line}\n`),
        }),
      );
    } else if (live !== null) {
      // a live audit reports at the end of its window, then stops its sources
      const run = await live.run(cmd, options, progress);
      try {
        await report(run);
      } finally {
        await run.finish();
      }
    } else {
      throw new CliError(
        'give --bundle DIR (a recording from `kvsentinel record --out DIR`); live sources are not available in this build',
      );
    }
  });
}
