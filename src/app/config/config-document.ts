// The configuration file's text → its document: YAML, or strict JSON when the file is named *.json (YAML would
// accept a JSON file with a trailing comma or a comment, and a file that says it is JSON should be JSON). A syntax
// error is one line naming the file, the line and column, what is wrong, and the text there.
import { parse as parseYaml, YAMLError } from 'yaml';
import { parseLosslessJson } from '../../core/wire/lossless-json.js';
import { ConfigError } from './config-error.js';

/** 1-based line and column of a character offset */
function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const line = before.split('\n').length;
  return { line, column: before.length - before.lastIndexOf('\n') };
}

function syntaxError(path: string, text: string, offset: number, what: string): ConfigError {
  const { line, column } = lineColumn(text, offset);
  const source = (text.split('\n')[line - 1] ?? '').trim();
  const near =
    source === '' ? '' : ` (line ${line} reads '${source.length > 80 ? `${source.slice(0, 77)}…` : source}')`;
  return new ConfigError(`${path}: line ${line}, column ${column}: ${what}${near}`);
}

export function parseConfigDocument(path: string, text: string): unknown {
  if (/\.json$/i.test(path)) {
    // the strict scanner the wire parsers share names the offset of the first problem; JSON.parse gives the value
    const checked = parseLosslessJson(text);
    const problem = checked.value === undefined ? checked.issues[0] : undefined;
    if (problem !== undefined) {
      const what = `not valid JSON: ${problem.message.replace(/ at offset \d+/, '')}`;
      throw problem.offset === null
        ? new ConfigError(`${path}: ${what}`)
        : syntaxError(path, text, problem.offset, what);
    }
    return JSON.parse(text) as unknown;
  }
  try {
    return parseYaml(text, { prettyErrors: false }) as unknown;
  } catch (err) {
    if (err instanceof YAMLError) throw syntaxError(path, text, err.pos[0], `not valid YAML: ${err.message}`);
    throw err;
  }
}
