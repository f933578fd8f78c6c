// parseCtxRequest for a body that arrives in chunks: the relay feeds each chunk of a CTX request as it streams
// through, so reading a 200 KB prompt of token ids costs one pass over bytes spread over the body's arrival, with no
// concatenation, no string and no second pass at the end (the relay's event loop is the proxy's data path).
//
// The scanner follows parseCtxRequest's member scan byte for byte (same leniency, same last-duplicate-wins), reads
// the prompt's ids straight into a Uint32Array (runs of `id,` through a WebAssembly kernel, id-run-kernel.ts) and
// keeps only the small members the request info reads. Structural
// characters are ASCII and never occur inside a UTF-8 multi-byte sequence, so scanning bytes finds exactly the
// members scanning the decoded text would. When the prompt needs the general JSON path (several prompts, strings),
// finish() answers null and the caller parses the whole text with parseCtxRequest.
import { createIdRunKernel, readIdRun, type IdRun, type IdRunKernel } from './id-run-kernel.js';
import { ctxInfoFromMembers, type CtxMemberView, type CtxRequestInfo, type HeaderBag } from './ctx-request.js';
import { doubledUint32 } from '../tables/doubled-uint32.js';

// top-level states
const START = 0;
const BEFORE_KEY = 1;
const KEY = 2;
const AFTER_KEY = 3;
const BEFORE_VALUE = 4;
const VALUE = 5;
const DONE = 6;
const MALFORMED = 7;

// token-array states
const T_OFF = 0;
const T_EXPECT = 1; // after '[' or ','
const T_NUMBER = 2;
const T_AFTER = 3; // after a number
const T_OK = 4;
const T_FAILED = 5;

/** members whose value text is kept (they are small); a larger one sends the request to the text path */
const KEPT = ['disaggregated_params', 'conversation_params', 'stream'] as const;
const TOKEN_KEYS = ['prompt', 'prompt_token_ids'] as const;
/** the request members the scanner recognises; any other key is skipped */
export const KNOWN_KEYS = [
  'prompt',
  'prompt_token_ids',
  'messages',
  'disaggregated_params',
  'conversation_params',
  'stream',
] as const;
const MAX_KEY_BYTES = 32;
const MAX_KEPT_BYTES = 64 * 1024;

function isWs(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

function asciiBytes(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

const KNOWN_BYTES = KNOWN_KEYS.map((k) => ({ key: k, bytes: asciiBytes(k) }));
const EMPTY = new Uint32Array(0);
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * What the scanners of one owner (a scan thread, a relay) share: the id kernel, and the scratch array the ids of the
 * array being read go into, kept for the next prompt (the answer is an exact copy): no doubling copies and no garbage
 * per prompt. One is kept (a scanner reading ids while another does gets its own), and only up to KEPT_SCRATCH_IDS, so
 * an outsized prompt does not pin its memory.
 */
const KEPT_SCRATCH_IDS = 256 * 1024;

export class CtxScanScratch {
  readonly kernel: IdRunKernel | null;
  #free: Uint32Array<ArrayBuffer> | null = null;

  /** `kernel`: the id kernel to run (one bound to a shared ring, bindIdRunKernel); default one of its own */
  constructor(kernel: IdRunKernel | null = createIdRunKernel()) {
    this.kernel = kernel;
  }

  take(): Uint32Array<ArrayBuffer> {
    const scratch = this.#free ?? new Uint32Array(1024);
    this.#free = null;
    return scratch;
  }

  release(scratch: Uint32Array<ArrayBuffer>): void {
    if (scratch.length <= KEPT_SCRATCH_IDS && scratch.length > (this.#free?.length ?? 0)) this.#free = scratch;
  }
}

interface Member {
  firstChar: number;
  /** kept value bytes (KEPT members only), trailing whitespace included until the value ends */
  kept: number[] | null;
  tokens: Uint32Array | null;
  /** the prompt starts with '[' but is not a flat id array: parseCtxRequest's general path is needed */
  needsText: boolean;
}

export class CtxRequestScanner {
  /** the owner's id kernel and scratch (one per thread or relay, never shared between two threads) */
  readonly #scratch: CtxScanScratch;
  #state = START;
  // key being read
  #keyBytes = new Uint8Array(MAX_KEY_BYTES);
  #keyLen = 0;
  #escape = false;
  // value being read
  #key: string | null = null; // a KNOWN_KEYS key, else null
  #depth = 0;
  #inString = false;
  #kept: number[] | null = null;
  #keptOverflow = false;
  #tState = T_OFF;
  #tokens = new Uint32Array(0);
  #tCount = 0;
  #tValue = 0;
  readonly #members = new Map<string, Member>();
  readonly #run: IdRun = { ids: EMPTY, count: 0, next: 0, loadedFrom: 0, loadedTo: -1 };
  #overflow = false;

  /** Scans the next chunk of the body. */
  constructor(scratch: CtxScanScratch) {
    this.#scratch = scratch;
  }

  feed(chunk: Uint8Array): void {
    const n = chunk.length;
    let i = 0;
    while (i < n) {
      const state = this.#state;
      if (state === DONE || state === MALFORMED) return;
      const c = chunk[i] as number;
      if (state === VALUE) {
        if (this.#tState !== T_OFF && this.#tState < T_OK) {
          // the fast path: a token array consumes digits, commas and whitespace without structural work
          i = this.#scanTokens(chunk, i);
          continue;
        }
        this.#valueByte(c);
        i++;
        continue;
      }
      if (state === KEY) {
        if (this.#escape) this.#escape = false;
        else if (c === 92) this.#escape = true;
        else if (c === 34) {
          this.#state = AFTER_KEY;
          i++;
          continue;
        }
        if (this.#keyLen < MAX_KEY_BYTES) this.#keyBytes[this.#keyLen] = c;
        this.#keyLen++;
        i++;
        continue;
      }
      if (isWs(c)) {
        i++;
        continue;
      }
      if (state === START) {
        this.#state = c === 123 ? BEFORE_KEY : MALFORMED;
        i++;
      } else if (state === BEFORE_KEY) {
        if (c === 125) this.#state = DONE;
        else if (c === 34) {
          this.#state = KEY;
          this.#keyLen = 0;
          this.#escape = false;
        } else this.#state = MALFORMED;
        i++;
      } else if (state === AFTER_KEY) {
        this.#state = c === 58 ? BEFORE_VALUE : MALFORMED;
        i++;
      } else {
        // BEFORE_VALUE: this byte starts the value (it may also end it at once, as in `{"a":}`)
        i += this.#startValue(c);
      }
    }
  }

  /**
   * The request info once the body ended (or stopped: a partial body scans as parseCtxRequest scans partial text).
   * Null when the prompt needs the general path: parse the whole text with parseCtxRequest instead.
   */
  finish(headers: HeaderBag): CtxRequestInfo | null {
    if (this.#overflow) return null;
    if (this.#state !== DONE) return ctxInfoFromMembers(null, headers);
    if (this.#members.get('prompt')?.needsText === true) return null;
    const members = this.#members;
    const view: CtxMemberView = {
      has: (key) => members.has(key),
      text: (key) => {
        const kept = members.get(key)?.kept;
        return kept === undefined || kept === null ? undefined : decoder.decode(Uint8Array.from(kept));
      },
      firstChar: (key) => members.get(key)?.firstChar,
      tokens: (key) => members.get(key)?.tokens ?? null,
    };
    return ctxInfoFromMembers(view, headers);
  }

  #keyName(): string | null {
    for (const k of KNOWN_BYTES) {
      if (k.bytes.length !== this.#keyLen) continue;
      let same = true;
      for (let j = 0; j < this.#keyLen; j++) {
        if (this.#keyBytes[j] !== k.bytes[j]) {
          same = false;
          break;
        }
      }
      if (same) return k.key;
    }
    return null;
  }

  /** Starts a value at its first byte; returns how many bytes it consumed (the '[' of a token array). */
  #startValue(first: number): number {
    this.#state = VALUE;
    const key = this.#keyName();
    this.#key = key;
    this.#depth = 0;
    this.#inString = false;
    this.#escape = false;
    this.#kept = key !== null && (KEPT as readonly string[]).includes(key) ? [] : null;
    this.#keptOverflow = false;
    this.#tState = T_OFF;
    this.#members.set(key ?? '', { firstChar: first, kept: null, tokens: null, needsText: false });
    if (key !== null && (TOKEN_KEYS as readonly string[]).includes(key) && first === 91) {
      this.#tState = T_EXPECT;
      this.#tokens = this.#scratch.take();
      this.#tCount = 0;
      this.#depth = 1;
      return 1;
    }
    return 0;
  }

  #keep(c: number): void {
    const kept = this.#kept;
    if (kept === null) return;
    if (kept.length >= MAX_KEPT_BYTES) this.#keptOverflow = true;
    else kept.push(c);
  }

  /**
   * scanTokenArray over the stream, from chunk[i]; returns the index of the first byte it did not consume. A byte
   * it rejects is left for the structural scan (parseCtxRequest's member scan sees every byte of the value too).
   */
  #scanTokens(chunk: Uint8Array, i: number): number {
    const n = chunk.length;
    let tState = this.#tState;
    let v = this.#tValue;
    let out = this.#tokens;
    let count = this.#tCount;
    this.#run.loadedTo = -1; // a new chunk: the kernel holds none of its bytes
    // locals only in the loops (no field writes per byte): this is the relay's hottest code, once per prompt byte
    for (;;) {
      if (tState === T_EXPECT) {
        // the common shape, a run of `id,` or `id, `: the kernel reads it, and stops at an id's first byte
        const run = this.#run;
        run.ids = out;
        run.count = count;
        run.next = i;
        readIdRun(this.#scratch.kernel, chunk, run, doubledUint32);
        out = run.ids;
        count = run.count;
        i = run.next;
        if (i >= n) break;
      }
      if (tState === T_NUMBER) {
        // the digits of one id; a value past 32 bits fails (however long it grows, it stays past 32 bits)
        while (i < n) {
          const d = ((chunk[i] as number) - 48) >>> 0;
          if (d > 9) break;
          v = v * 10 + d;
          i++;
        }
        if (v > 0xffff_ffff) {
          tState = T_FAILED;
          break;
        }
        if (i === n) break; // the id goes on in the next chunk
        if (count === out.length) out = doubledUint32(out);
        out[count++] = v;
        tState = T_AFTER;
      }
      if (i === n) break;
      const c = chunk[i] as number;
      if (c === 44 && tState === T_AFTER) tState = T_EXPECT;
      else if (c >= 48 && c <= 57 && tState === T_EXPECT) {
        v = c - 48;
        tState = T_NUMBER;
      } else if (c === 93) {
        if (tState === T_EXPECT && count > 0) {
          tState = T_FAILED;
          break;
        }
        tState = T_OK;
        this.#depth = 0; // the array's ']' closes the value's only bracket
        i++;
        break;
      } else if (!isWs(c)) {
        tState = T_FAILED;
        break;
      }
      i++;
    }
    this.#tState = tState;
    this.#tValue = v;
    this.#tokens = out;
    this.#tCount = count;
    return i;
  }

  #valueByte(c: number): void {
    if (this.#inString) {
      if (this.#escape) this.#escape = false;
      else if (c === 92) this.#escape = true;
      else if (c === 34) this.#inString = false;
      this.#keep(c);
      return;
    }
    if (c === 34) this.#inString = true;
    else if (c === 123 || c === 91) this.#depth++;
    else if (c === 125 || c === 93 || c === 44) {
      if (this.#depth === 0) {
        this.#endValue();
        // ',' is consumed; '}' ends the object; ']' where a key belongs is malformed (as in parseCtxRequest)
        if (c === 125) this.#state = DONE;
        else if (c === 93) this.#state = MALFORMED;
        return;
      }
      if (c !== 44) this.#depth--;
    }
    this.#keep(c);
  }

  #endValue(): void {
    const key = this.#key ?? '';
    const member = this.#members.get(key) as Member;
    if (this.#tState !== T_OFF) {
      member.tokens = this.#tState === T_OK ? this.#tokens.slice(0, this.#tCount) : null;
      if (key === 'prompt' && this.#tState !== T_OK) member.needsText = true;
      this.#scratch.release(this.#tokens);
    }
    if (this.#keptOverflow) this.#overflow = true;
    else if (this.#kept !== null) {
      const kept = this.#kept;
      let end = kept.length;
      while (end > 0 && isWs(kept[end - 1] as number)) end--;
      kept.length = end;
      member.kept = kept;
    }
    this.#kept = null;
    this.#tState = T_OFF;
    this.#tokens = EMPTY;
    this.#state = BEFORE_KEY;
  }
}
