// Reads a bundle back as a stream of records: line by line, so a 5 M-event bundle is audited in constant memory.
// Malformed lines are reported (with their line numbers) through onIssue and skipped, never fatal.
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileErrorText } from './file-error-text.js';
import { decodeBundleRecord, type BundleRecord } from '../core/bundle/bundle-codec.js';
import { KeyHistory } from '../core/bundle/bundle-keys.js';
import {
  MANIFEST_FILE,
  OBSERVATIONS_FILE,
  parseBundleManifest,
  type BundleManifest,
} from '../core/bundle/bundle-manifest.js';
import type { WireIssue } from '../core/wire/wire-issue.js';
import { KvsentinelError } from '../core/errors.js';

export class BundleError extends KvsentinelError {
  override readonly name = 'BundleError';

  constructor(message: string, options?: { cause?: unknown }) {
    super('bundle-invalid', message, options);
  }
}

export async function readBundleManifest(dir: string): Promise<BundleManifest> {
  let info;
  try {
    info = await stat(dir);
  } catch (err) {
    throw new BundleError(
      (err as NodeJS.ErrnoException).code === 'ENOENT'
        ? `no such directory (a bundle is the directory \`kvsentinel record --out DIR\` wrote)`
        : `cannot read the directory: ${fileErrorText(err)}`,
    );
  }
  if (!info.isDirectory())
    throw new BundleError('is a file, not a bundle directory (give the directory `kvsentinel record --out DIR` wrote)');
  const path = join(dir, MANIFEST_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new BundleError(
      code === 'ENOENT'
        ? `${dir} is not a kvsentinel bundle: ${MANIFEST_FILE} is missing`
        : `cannot read ${path}: ${fileErrorText(err)}`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new BundleError(`${path}: not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  const result = parseBundleManifest(parsed);
  if (!result.ok) throw new BundleError(`${path}: ${result.message}`);
  return result.manifest;
}

export interface ReadBundleOptions {
  readonly onIssue?: (issue: WireIssue) => void;
}

/**
 * Splits a byte stream into lines (LF or CRLF endings), decoded as UTF-8: feed it the chunks in order, then call
 * `end`. It splits the raw chunks on LF bytes (a LF never occurs inside a multi-byte UTF-8 sequence), so each line is
 * decoded once, straight from the chunk it lies in; only a line that spans chunks is copied.
 */
export class LineSplitter {
  /** the start of a line that spans chunks */
  #pending: Buffer[] = [];

  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, start)) {
      if (this.#pending.length > 0) {
        this.#pending.push(chunk.subarray(0, nl));
        const line = Buffer.concat(this.#pending);
        this.#pending = [];
        lines.push(decodeLine(line, 0, line.length));
      } else {
        lines.push(decodeLine(chunk, start, nl));
      }
      start = nl + 1;
    }
    if (start < chunk.length) this.#pending.push(chunk.subarray(start));
    return lines;
  }

  /** The last line when the input did not end with a newline. */
  end(): string[] {
    if (this.#pending.length === 0) return [];
    const line = Buffer.concat(this.#pending);
    this.#pending = [];
    return [decodeLine(line, 0, line.length)];
  }
}

function decodeLine(buf: Buffer, from: number, to: number): string {
  return buf.toString('utf8', from, to > from && buf[to - 1] === 13 ? to - 1 : to);
}

/** Yields the records of DIR/observations.jsonl in order. */
export async function* readBundleRecords(
  dir: string,
  manifest: BundleManifest,
  options: ReadBundleOptions = {},
): AsyncGenerator<BundleRecord> {
  const path = join(dir, OBSERVATIONS_FILE);
  const stream = createReadStream(path, { highWaterMark: 1 << 20 });
  const opened = new Promise<void>((resolve, reject) => {
    stream.once('open', () => resolve());
    stream.once('error', reject);
  });
  try {
    await opened;
  } catch (err) {
    throw new BundleError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  const history = new KeyHistory(manifest.key_history);
  let lineNumber = 0;
  try {
    const splitter = new LineSplitter();
    const decode = function* (lines: readonly string[]): Generator<BundleRecord> {
      for (const line of lines) {
        lineNumber++;
        if (line.trim() === '') continue;
        const result = decodeBundleRecord(line, lineNumber, history);
        if (result.ok) yield result.record;
        else options.onIssue?.(result.issue);
      }
    };
    for await (const chunk of stream as AsyncIterable<Buffer>) yield* decode(splitter.push(chunk));
    yield* decode(splitter.end());
  } finally {
    stream.destroy();
  }
}
