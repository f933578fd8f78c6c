// `npm run bench -- --only id,…` re-measures some sections: their text and target rows replace those in the existing
// report, every other section stays as it was measured, and a line under the machine table says which sections were
// re-measured alone, when, and under what load.

interface ParsedReport {
  /** everything before "## Targets" */
  readonly preamble: string[];
  /** the Targets table's header and separator lines */
  readonly targetsHead: string[];
  /** target rows by section title, in order */
  readonly targetRows: Map<string, string[]>;
  /** section title → its lines (heading included), in order */
  readonly sections: Map<string, string[]>;
}

function parse(text: string): ParsedReport | null {
  const lines = text.replace(/\n+$/, '').split('\n');
  const t = lines.indexOf('## Targets');
  if (t === -1) return null;
  const preamble = lines.slice(0, t);
  let i = t + 1;
  while (i < lines.length && lines[i] === '') i++;
  const targetsHead: string[] = [];
  const targetRows = new Map<string, string[]>();
  for (; i < lines.length && lines[i]!.startsWith('|'); i++) {
    const line = lines[i]!;
    if (targetsHead.length < 2) {
      targetsHead.push(line);
      continue;
    }
    const section = line.split('|')[1]!.trim();
    targetRows.set(section, [...(targetRows.get(section) ?? []), line]);
  }
  const sections = new Map<string, string[]>();
  let current: string[] | null = null;
  for (; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('## ')) {
      current = [line];
      sections.set(line.slice(3), current);
    } else current?.push(line);
  }
  for (const body of sections.values()) while (body.length > 0 && body[body.length - 1] === '') body.pop();
  return { preamble, targetsHead, targetRows, sections };
}

/**
 * The existing report with the freshly measured sections (`fresh`, a whole report of those sections only) in place of
 * their old text and target rows; `existing` null or not a report: `fresh` alone.
 */
export function mergeReport(existing: string | null, fresh: string, remeasured: string): string {
  const old = existing === null ? null : parse(existing);
  const now = parse(fresh);
  if (old === null || now === null) return fresh;
  const updated = new Set(now.sections.keys());
  const marker = (title: string): string => `> Re-measured alone: ${title} —`;
  const preamble = old.preamble.filter((l) => ![...updated].some((title) => l.startsWith(marker(title))));
  while (preamble.length > 0 && preamble[preamble.length - 1] === '') preamble.pop();
  for (const title of updated) preamble.push('', `${marker(title)} ${remeasured}`);
  const order = [...old.sections.keys()];
  for (const title of updated) if (!order.includes(title)) order.push(title);
  const out: string[] = [...preamble, '', '## Targets', '', ...old.targetsHead];
  for (const title of order) out.push(...((updated.has(title) ? now.targetRows : old.targetRows).get(title) ?? []));
  for (const title of order) {
    const body = (updated.has(title) ? now.sections : old.sections).get(title);
    if (body !== undefined) out.push('', ...body);
  }
  return `${out.join('\n')}\n`;
}
