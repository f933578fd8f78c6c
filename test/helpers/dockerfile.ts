// Reads the repository's Dockerfile into stages of instructions (continuation lines joined, comments dropped), so tests
// can check and run what each stage does without a Docker daemon.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './paths.js';

export interface Instruction {
  readonly op: string;
  /** The text after the instruction word, continuations joined with one space. */
  readonly rest: string;
}

export interface Stage {
  readonly base: string;
  readonly name: string | null;
  readonly instructions: readonly Instruction[];
}

export function dockerfileStages(path = join(repoRoot, 'Dockerfile')): Stage[] {
  const logical: string[] = [];
  let pending = '';
  for (const raw of readFileSync(path, 'utf8').split('\n')) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    logical.push(pending + line);
    pending = '';
  }
  const stages: { base: string; name: string | null; instructions: Instruction[] }[] = [];
  for (const l of logical) {
    const m = /^(\w+)\s+(.*)$/.exec(l);
    if (m === null) throw new Error(`Dockerfile: cannot read "${l}"`);
    const op = m[1]!.toUpperCase();
    const rest = m[2]!;
    if (op === 'FROM') {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest);
      if (from === null) throw new Error(`Dockerfile: cannot read FROM ${rest}`);
      stages.push({ base: from[1]!, name: from[2] ?? null, instructions: [] });
      continue;
    }
    const stage = stages.at(-1);
    if (stage === undefined) throw new Error(`Dockerfile: ${op} before the first FROM`);
    stage.instructions.push({ op, rest });
  }
  return stages;
}

/** The instructions of one kind in a stage. */
export function ops(stage: Stage, op: string): string[] {
  return stage.instructions.filter((i) => i.op === op).map((i) => i.rest);
}

/** The install stage's `npm install …` command as words (the Dockerfile writes it without quotes). */
export function installCommand(stages: readonly Stage[]): string[] {
  const install = stages.find((s) => s.name === 'install');
  const runs = install === undefined ? [] : ops(install, 'RUN');
  if (runs.length !== 1) throw new Error(`Dockerfile: the install stage should run one command, not ${runs.length}`);
  return runs[0]!.split(/\s+/);
}
