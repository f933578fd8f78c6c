// Reads a bundle back as a stream of records: line by line, so a 5 M-event bundle is audited in constant memory.
// Malformed lines are reported (with their line numbers) through onIssue and skipped, never fatal.
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { decodeBundleRecord, KeyHistory, type BundleRecord } from '../core/bundle/bundle-codec.js';
import { MANIFEST_FILE, OBSERVATIONS_FILE, parseBundleManifest, type BundleManifest } from '../core/bundle/bundle-manifest.js';
import type { WireIssue } from '../core/wire/wire-issue.js';

export class BundleError extends Error {
  override readonly name = 'BundleError';
}

export async function readBundleManifest(dir: string): Promise<BundleManifest> {
  const path = join(dir, MANIFEST_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new BundleError(code === 'ENOENT' ? `${dir} is not a kvsentinel bundle: ${MANIFEST_FILE} is missing` : `cannot read ${path}: ${code ?? String(err)}`);
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

/** Yields the records of DIR/observations.jsonl in order. */
export async function* readBundleRecords(dir: string, manifest: BundleManifest, options: ReadBundleOptions = {}): AsyncGenerator<BundleRecord> {
  const path = join(dir, OBSERVATIONS_FILE);
  const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 });
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
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let lineNumber = 0;
  try {
    for await (const line of lines) {
      lineNumber++;
      if (line.trim() === '') continue;
      const result = decodeBundleRecord(line, lineNumber, history);
      if (result.ok) yield result.record;
      else options.onIssue?.(result.issue);
    }
  } finally {
    lines.close();
    stream.destroy();
  }
}
