// Runs the real Prometheus command-line tools (Debian packages prometheus / prometheus-alertmanager).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { repoRoot } from './paths.js';

export interface ToolResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a binary to completion; a missing binary is an error that names the Debian package to install. */
export function runTool(bin: string, args: readonly string[], input?: string, cwd = repoRoot): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(bin, args, { cwd, timeout: 30_000 }, (err, stdout, stderr) => {
      if (err !== null && (err as NodeJS.ErrnoException).code === 'ENOENT') {
        reject(
          new Error(
            `${bin} not found: install the Debian packages prometheus and prometheus-alertmanager (.ci/run does)`,
          ),
        );
        return;
      }
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
      resolve({ code, stdout, stderr });
    });
    child.stdin?.end(input ?? '');
  });
}

export const RULES_FILE = join(repoRoot, 'alerts/kvsentinel.rules.yaml');
export const RULE_TESTS_FILE = join(repoRoot, 'alerts/tests/kvsentinel.test.yaml');

export interface Rule {
  readonly alert?: string;
  readonly record?: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
}
export interface RuleGroup {
  readonly name: string;
  readonly rules: readonly Rule[];
}

export function loadRuleGroups(file = RULES_FILE): RuleGroup[] {
  const doc = parseYaml(readFileSync(file, 'utf8')) as { groups?: RuleGroup[] } | null;
  if (doc?.groups === undefined) throw new Error(`${file}: no groups`);
  return doc.groups;
}

export function recordingRuleNames(groups: readonly RuleGroup[] = loadRuleGroups()): Set<string> {
  return new Set(groups.flatMap((g) => g.rules.flatMap((r) => (r.record === undefined ? [] : [r.record]))));
}

export function alertRules(groups: readonly RuleGroup[] = loadRuleGroups()): Rule[] {
  return groups.flatMap((g) => g.rules.filter((r) => r.alert !== undefined));
}
