// Follows a text file like `tail -F`: starts at the end (or the beginning when asked), reads appended lines, reopens
// the file when it is replaced (rotation: new inode) and starts over when it shrinks (truncation). A missing file is
// a reported state, not an error that stops following. Lines are handed over complete; a partial last line waits.
import { open, stat } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { fileErrorText } from './file-error-text.js';
import { PollingSource } from './polling-source.js';
import type { SourceReporter } from './ports.js';

export interface FileFollowerOptions {
  readonly intervalMs: number;
  /** read the existing content first (default: start at the end, like tail -F) */
  readonly fromStart: boolean;
  /** a line longer than this is skipped and counted (bad input 'line-too-long') */
  readonly maxLineBytes: number;
}

export class FileFollower extends PollingSource {
  readonly #path: string;
  readonly #status: SourceReporter;
  readonly #onLine: (line: string, lineNo: number) => void;
  #ino: number | null = null;
  #offset = 0;
  #lineNo = 0;
  #partial = '';
  #skipping = false;
  #first = true;
  #decoder = new StringDecoder('utf8'); // a UTF-8 character may straddle two reads
  readonly #options: FileFollowerOptions;

  constructor(
    name: string,
    path: string,
    deps: { status: SourceReporter; onLine: (line: string, lineNo: number) => void },
    options: Partial<FileFollowerOptions> = {},
  ) {
    const opts = { intervalMs: 500, fromStart: false, maxLineBytes: 64 * 1024 * 1024, ...options };
    super(name, opts.intervalMs, () => this.#readMore());
    this.#options = opts;
    this.#path = path;
    this.#status = deps.status;
    this.#onLine = deps.onLine;
  }

  async #readMore(): Promise<void> {
    let info;
    try {
      info = await stat(this.#path);
    } catch (err) {
      this.#status.fail(this.name, 'io', `${this.#path}: ${fileErrorText(err)}`);
      this.#first = false; // a file that appears later is read from its start
      return;
    }
    if (this.#ino !== info.ino) {
      // first sight or rotation: a rotated-in file is read from its start
      const startAtEnd = this.#first && !this.#options.fromStart;
      this.#ino = info.ino;
      this.#offset = startAtEnd ? info.size : 0;
      this.#partial = '';
      this.#skipping = false;
      this.#decoder = new StringDecoder('utf8');
    } else if (info.size < this.#offset) {
      this.#offset = 0; // truncated
      this.#partial = '';
      this.#skipping = false;
      this.#decoder = new StringDecoder('utf8');
    }
    this.#first = false;
    if (info.size > this.#offset) {
      try {
        await this.#readRange(info.size);
      } catch (err) {
        this.#status.fail(this.name, 'io', `${this.#path}: ${fileErrorText(err)}`);
        return;
      }
    }
    this.#status.ok(this.name);
  }

  async #readRange(end: number): Promise<void> {
    const handle = await open(this.#path, 'r');
    try {
      const chunk = Buffer.allocUnsafe(Math.min(1024 * 1024, end - this.#offset));
      while (this.#offset < end) {
        const { bytesRead } = await handle.read(chunk, 0, Math.min(chunk.length, end - this.#offset), this.#offset);
        if (bytesRead === 0) break;
        this.#offset += bytesRead;
        this.#consume(this.#decoder.write(chunk.subarray(0, bytesRead)));
      }
    } finally {
      await handle.close();
    }
  }

  #consume(text: string): void {
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      const piece = text.slice(start, nl);
      start = nl + 1;
      this.#lineNo++;
      if (this.#skipping) {
        this.#skipping = false;
        this.#partial = '';
        continue;
      }
      const line = (this.#partial + piece).replace(/\r$/, '');
      this.#partial = '';
      if (line.length > this.#options.maxLineBytes) {
        this.#status.badInput(this.name, 'line-too-long');
        continue;
      }
      if (line.trim() !== '') this.#onLine(line, this.#lineNo);
    }
    if (!this.#skipping) {
      this.#partial += text.slice(start);
      if (this.#partial.length > this.#options.maxLineBytes) {
        this.#status.badInput(this.name, 'line-too-long');
        this.#skipping = true;
        this.#partial = '';
      }
    }
  }
}
