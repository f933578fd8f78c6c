// Writes a bundle (DIR/manifest.json + DIR/observations.jsonl) from a stream of observations, computing at record
// time the digests the joins need so that prompts stay in the process (unless includePrompts). A provisional
// manifest is written first, so a bundle cut short by a crash is still readable (complete: false).
import { KvsentinelError } from '../core/errors.js';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BUNDLE_FORMAT, BUNDLE_VERSION, encodeBundleRecord } from '../core/bundle/bundle-codec.js';
import { DEFAULT_KEY_HISTORY, KeyHistory } from '../core/bundle/bundle-keys.js';
import { MANIFEST_FILE, OBSERVATIONS_FILE, type BundleManifest } from '../core/bundle/bundle-manifest.js';
import type { Observation } from '../core/observe/observation.js';
import { ObservationDigester } from '../core/state/observation-digester.js';
import type { SentinelMode } from '../core/state/sentinel-state.js';

export interface BundleWriterOptions {
  readonly mode: SentinelMode;
  readonly includePrompts?: boolean;
  readonly keyHistory?: number;
  readonly meta?: Readonly<Record<string, string>>;
  /** kvsentinel version written to the manifest */
  readonly version?: string;
  /** ISO time of the recording (default: now) */
  readonly createdAt?: string;
}

const FLUSH_BYTES = 1 << 20;

export class BundleWriter {
  readonly #dir: string;
  readonly #options: BundleWriterOptions;
  readonly #stream: WriteStream;
  readonly #digester = new ObservationDigester();
  readonly #history: KeyHistory;
  readonly #kinds: Record<string, number> = {};
  #chunk = '';
  #count = 0;
  #firstTs: number | null = null;
  #lastTs: number | null = null;
  #closed = false;
  #error: Error | null = null;

  private constructor(dir: string, options: BundleWriterOptions, stream: WriteStream) {
    this.#dir = dir;
    this.#options = options;
    this.#stream = stream;
    this.#history = new KeyHistory(options.keyHistory ?? DEFAULT_KEY_HISTORY);
    stream.on('error', (err) => {
      this.#error = err;
    });
  }

  /** Creates DIR (which must be empty or absent) and starts the bundle. */
  static async create(dir: string, options: BundleWriterOptions): Promise<BundleWriter> {
    await mkdir(dir, { recursive: true });
    const existing = await readdir(dir);
    if (existing.length > 0)
      throw new KvsentinelError('write-failed', `${dir} is not empty: a bundle needs a fresh directory`);
    const writer = new BundleWriter(dir, options, createWriteStream(join(dir, OBSERVATIONS_FILE), { flags: 'wx' }));
    await writer.#writeManifest(false);
    return writer;
  }

  get observations(): number {
    return this.#count;
  }

  /** Appends one observation (digest computed here, from the same context the state would have). */
  write(obs: Observation): void {
    if (this.#closed) throw new KvsentinelError('internal', 'bundle writer is closed');
    if (this.#error !== null) throw this.#error;
    const digest = this.#digester.digest(obs);
    this.#digester.observe(obs, digest);
    this.#chunk +=
      encodeBundleRecord({ observation: obs, digest }, this.#history, this.#options.includePrompts === true) + '\n';
    this.#count++;
    this.#kinds[obs.kind] = (this.#kinds[obs.kind] ?? 0) + 1;
    if (this.#firstTs === null || obs.ts < this.#firstTs) this.#firstTs = obs.ts;
    if (this.#lastTs === null || obs.ts > this.#lastTs) this.#lastTs = obs.ts;
    if (this.#chunk.length >= FLUSH_BYTES) this.#flush();
  }

  /**
   * Appends a line already encoded by a sidecar's observation stream (its digest computed there, against the
   * same key history as this bundle's: the writer must be created with the stream's key_history).
   */
  writeEncoded(line: string, kind: string, ts: number): void {
    if (this.#closed) throw new KvsentinelError('internal', 'bundle writer is closed');
    if (this.#error !== null) throw this.#error;
    this.#chunk += `${line}\n`;
    this.#count++;
    this.#kinds[kind] = (this.#kinds[kind] ?? 0) + 1;
    if (this.#firstTs === null || ts < this.#firstTs) this.#firstTs = ts;
    if (this.#lastTs === null || ts > this.#lastTs) this.#lastTs = ts;
    if (this.#chunk.length >= FLUSH_BYTES) this.#flush();
  }

  /** Resolves once buffered lines have reached the OS (backpressure for async producers). */
  async drain(): Promise<void> {
    this.#flush();
    if (this.#stream.writableNeedDrain) await new Promise<void>((resolve) => this.#stream.once('drain', resolve));
  }

  async close(): Promise<BundleManifest> {
    if (this.#closed) throw new KvsentinelError('internal', 'bundle writer is already closed');
    this.#closed = true;
    this.#flush();
    await new Promise<void>((resolve, reject) => {
      this.#stream.end((err?: Error | null) => (err ? reject(err) : resolve()));
    });
    if (this.#error !== null) throw this.#error;
    return this.#writeManifest(true);
  }

  #flush(): void {
    if (this.#chunk.length === 0) return;
    this.#stream.write(this.#chunk);
    this.#chunk = '';
  }

  async #writeManifest(complete: boolean): Promise<BundleManifest> {
    const manifest: BundleManifest = {
      format: BUNDLE_FORMAT,
      version: BUNDLE_VERSION,
      kvsentinel_version: this.#options.version ?? 'unknown',
      created_at: this.#options.createdAt ?? new Date().toISOString(),
      mode: this.#options.mode,
      include_prompts: this.#options.includePrompts === true,
      key_history: this.#options.keyHistory ?? DEFAULT_KEY_HISTORY,
      complete,
      observations: complete ? this.#count : null,
      first_ts: this.#firstTs,
      last_ts: this.#lastTs,
      kinds: { ...this.#kinds },
      meta: { ...this.#options.meta },
    };
    await writeFile(join(this.#dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    return manifest;
  }
}
