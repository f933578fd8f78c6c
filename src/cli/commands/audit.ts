// `kvsentinel audit`: one-shot diagnosis, offline from a recorded bundle (--bundle DIR) or live from the daemon's
// sources (their flags plug in through `liveAudit`). Prints the text report or --json; exit 0 healthy, 1 findings at
// or above --fail-on, 2 usage or known errors.
import { Option, type Command } from 'commander';
import { auditExitCode, buildAuditReport, type AuditReport } from '../../core/diagnosis/audit-report.js';
import { auditRecords } from '../../core/diagnosis/audit-records.js';
import { SEVERITIES, type Severity } from '../../core/diagnosis/finding-catalog.js';
import type { DiagnosisInput } from '../../core/diagnosis/rule.js';
import { buildReportModel } from '../../core/report/report-model.js';
import { Timeline, type TimelineSample } from '../../core/report/timeline.js';
import { writeReportFile } from '../../outputs/report/report-file.js';
import type { WireIssue } from '../../core/wire/wire-issue.js';
import { BundleError, readBundleManifest, readBundleRecords } from '../../sources/bundle-reader.js';
import { CliError } from '../cli-error.js';
import { colorFor } from '../reporters/color.js';
import { renderJson } from '../reporters/json.js';
import { renderText } from '../reporters/text.js';
import { VERSION } from '../../app/version.js';

export interface AuditCommandOptions {
  bundle?: string;
  json?: boolean;
  failOn: Severity;
  progress?: boolean;
  report?: string;
}

/** An audit with what the HTML report plots: the timeline over the window and the state's final diagnosis input. */
export interface AuditRun {
  readonly report: AuditReport;
  readonly samples: readonly TimelineSample[];
  readonly sampleIntervalMs: number | null;
  readonly input: DiagnosisInput | null;
}

/** Audits a bundle directory; progress lines go to `progress` (stderr) when given. */
export async function auditBundle(dir: string, progress?: (line: string) => void): Promise<AuditReport> {
  return (await auditBundleRun(dir, progress)).report;
}

export async function auditBundleRun(dir: string, progress?: (line: string) => void): Promise<AuditRun> {
  const timeline = new Timeline();
  let manifest;
  try {
    manifest = await readBundleManifest(dir);
  } catch (err) {
    if (err instanceof BundleError) throw new CliError(`--bundle ${dir}: ${err.message}`);
    throw err;
  }
  const issues: WireIssue[] = [];
  let malformed = 0;
  const total = manifest.observations;
  const started = Date.now();
  let result;
  try {
    result = await auditRecords(
      readBundleRecords(dir, manifest, {
        onIssue: (issue) => {
          malformed++;
          if (issues.length < 5) issues.push(issue);
        },
      }),
      {
        mode: manifest.mode,
        timeline,
        onProgress: (records) => {
          const of = total !== null ? ` of ${total.toLocaleString('en-US')} (${((100 * records) / total).toFixed(0)}%)` : '';
          progress?.(`kvsentinel: audited ${records.toLocaleString('en-US')} observations${of} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
        },
      },
    );
  } catch (err) {
    if (err instanceof BundleError) throw new CliError(`--bundle ${dir}: ${err.message}`);
    throw err;
  }
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

/** Writes the self-contained HTML report of an audit run (--report FILE). */
export async function writeHtmlReport(path: string, run: AuditRun): Promise<void> {
  const model = buildReportModel({ version: VERSION, generatedAt: Date.now(), audit: run.report, samples: run.samples, sampleIntervalMs: run.sampleIntervalMs, input: run.input });
  try {
    await writeReportFile(path, model);
  } catch (err) {
    throw new CliError(`--report ${path}: cannot write the report: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Prints the report and returns the exit code. */
export function emitAuditReport(report: AuditReport, options: { json?: boolean; failOn: Severity }): number {
  process.stdout.write(options.json === true ? renderJson(report) : renderText(report, colorFor(process.stdout)));
  return auditExitCode(report, options.failOn);
}

/** Live audit hook: the daemon's sources register it (flags, --duration); null until they do. */
export type LiveAudit = (command: Command, options: Record<string, unknown>, progress: (line: string) => void) => Promise<AuditRun & { readonly finish: () => Promise<void> }>;

export function registerAuditCommand(program: Command, live: { addOptions: (cmd: Command) => void; run: LiveAudit } | null = null): void {
  const command = program
    .command('audit')
    .description('one-shot diagnosis: offline from a recorded bundle (--bundle DIR) or live from the sources for --duration')
    .option('--bundle <dir>', 'audit a bundle written by `kvsentinel record --out DIR`')
    .option('--json', 'print one JSON object (docs/design.md §7) instead of the text report')
    .addOption(new Option('--fail-on <severity>', 'exit 1 when a finding is at or above this severity (exit 3: none is, but the evidence is insufficient for an all-clear)').choices(SEVERITIES).default('warning'))
    .option('--no-progress', 'no progress lines on stderr')
    .option('--report <file.html>', 'also write a self-contained HTML report (verdict, findings, plots over the window) to this file');
  live?.addOptions(command);
  command.action(async (options: AuditCommandOptions & Record<string, unknown>, cmd: Command) => {
    const progress = options.progress === false || process.stderr.isTTY !== true ? (): void => undefined : (line: string): void => void process.stderr.write(`${line}\n`);
    const report = async (run: AuditRun): Promise<void> => {
      if (options.report !== undefined) {
        await writeHtmlReport(options.report, run);
        progress(`kvsentinel: HTML report written to ${options.report}`);
      }
      process.exitCode = emitAuditReport(run.report, options);
    };
    if (options.bundle !== undefined) {
      await report(await auditBundleRun(options.bundle, progress));
    } else if (live !== null) {
      // a live audit reports at the end of its window, then stops its sources
      const run = await live.run(cmd, options, progress);
      try {
        await report(run);
      } finally {
        await run.finish();
      }
    } else {
      throw new CliError('give --bundle DIR (a recording from `kvsentinel record --out DIR`); live sources are not available in this build');
    }
  });
}
