// The prompt scanner's innermost loop as a small WebAssembly function: a run of token ids written `id,` or `id, `
// (JSON.stringify, Python's json.dumps). JavaScript reads an id digit by digit and mispredicts where each id ends
// (~25 cycles an id); here each id is one 8-byte load, its length from the first non-digit byte (a bit trick, no
// branch) and its value from three multiplies that combine the digits pairwise — about half the time per byte.
//
// The kernel reads only what it is sure of — ids of 1 to 7 digits (below 2^32 always), each followed by ',' and at
// most one space — and stops at the first byte that is anything else, at the start of an id, where the scanner's own
// byte-by-byte loop takes over (an id that is longer, other whitespace, the ']', a chunk's last bytes). The module is
// assembled here from its instructions (no toolchain); where WebAssembly is not available the scanner reads every
// byte itself.

// the module's memory: input slices at 0, the ids read at OUT_AT (a slice of SLICE bytes holds at most SLICE/2 ids)
const SLICE = 64 * 1024;
const OUT_AT = SLICE;
const MEMORY_PAGES = 4; // 256 KB: SLICE bytes in, 2 * SLICE bytes of ids out
/** a run shorter than this is left to the scanner (the call and the copies cost more than they save) */
const MIN_RUN_BYTES = 32;
/** the kernel reads 8 bytes at an id, and the byte after its ',' */
const LOOKAHEAD = 9;

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

function sleb(value: bigint): number[] {
  let v = BigInt.asIntN(64, value);
  const out: number[] = [];
  for (;;) {
    const b = Number(v & 0x7fn);
    v >>= 7n;
    if ((v === 0n && (b & 0x40) === 0) || (v === -1n && (b & 0x40) !== 0)) return [...out, b];
    out.push(b | 0x80);
  }
}

const vec = (items: readonly (readonly number[])[]): number[] => [...uleb(items.length), ...items.flat()];
const section = (id: number, bytes: readonly number[]): number[] => [id, ...uleb(bytes.length), ...bytes];
const name = (s: string): number[] => vec([...s].map((c) => [c.charCodeAt(0)]));

// the instructions used (WebAssembly core spec, binary format)
const I32 = 0x7f;
const I64 = 0x7e;
const BLOCK = 0x02;
const LOOP = 0x03;
const BR = 0x0c;
const BR_IF = 0x0d;
const END = 0x0b;
const VOID = 0x40;
const GLOBAL_SET = 0x24;
const I64_LOAD = 0x29;
const I32_LOAD8_U = 0x2d;
const I32_STORE = 0x36;
const I32_ADD = 0x6a;
const I32_SUB = 0x6b;
const I32_SHL = 0x74;
const I32_SHR_U = 0x76;
const I32_EQ = 0x46;
const I32_NE = 0x47;
const I32_GT_U = 0x4b;
const I64_CTZ = 0x7a;
const I64_ADD = 0x7c;
const I64_SUB = 0x7d;
const I64_MUL = 0x7e;
const I64_AND = 0x83;
const I64_OR = 0x84;
const I64_XOR = 0x85;
const I64_SHL = 0x86;
const I64_SHR_U = 0x88;
const I32_WRAP_I64 = 0xa7;
const I64_EXTEND_I32_U = 0xad;
const get = (local: number): number[] => [0x20, local];
const set = (local: number): number[] => [0x21, local];
const tee = (local: number): number[] => [0x22, local];
const i32 = (v: number): number[] => [0x41, ...sleb(BigInt(v))];
const i64 = (v: bigint): number[] => [0x42, ...sleb(v)];
const bytesOf = (b: number): bigint => BigInt(b) * 0x0101010101010101n;

// ids(i, end, out) -> where it stopped; the ids go to out, out's end to the global outEnd
const [P_I, P_END, P_OUT, L_X, L_LEN, L_Y] = [0, 1, 2, 3, 4, 5];
// prettier-ignore
const BODY: number[] = [
  BLOCK, VOID, LOOP, VOID,
  // room for an id's 8 bytes and the byte after its ','
  ...get(P_I), ...i32(LOOKAHEAD), I32_ADD, ...get(P_END), I32_GT_U, BR_IF, 1,
  // x: the 8 bytes at i, digits turned into their values
  ...get(P_I), I64_LOAD, 0, 0, ...i64(bytesOf(0x30)), I64_XOR, ...tee(L_X),
  // the high bit of each byte that is no digit (x & 0x7f) + 0x76 overflows 0x7f past 9; a byte ≥ 0x80 is none
  ...i64(bytesOf(0x7f)), I64_AND, ...i64(bytesOf(0x76)), I64_ADD, ...get(L_X), I64_OR, ...i64(bytesOf(0x80)), I64_AND,
  // the id's length: the first such byte; only 1 to 7 digits go on
  I64_CTZ, I32_WRAP_I64, ...i32(3), I32_SHR_U, ...tee(L_LEN),
  ...i32(1), I32_SUB, ...i32(6), I32_GT_U, BR_IF, 1,
  // followed by ','
  ...get(P_I), ...get(L_LEN), I32_ADD, I32_LOAD8_U, 0, 0, ...i32(44), I32_NE, BR_IF, 1,
  ...get(P_OUT),
  // the digits moved to the top of 8 places (leading zeros), then combined in pairs, fours, eights
  ...get(L_X), ...i64(64n), ...get(L_LEN), ...i32(3), I32_SHL, I64_EXTEND_I32_U, I64_SUB, I64_SHL, ...tee(L_Y),
  ...i64(10n), I64_MUL, ...get(L_Y), ...i64(8n), I64_SHR_U, I64_ADD, ...i64(0x00ff00ff00ff00ffn), I64_AND, ...tee(L_Y),
  ...i64(100n), I64_MUL, ...get(L_Y), ...i64(16n), I64_SHR_U, I64_ADD, ...i64(0x0000ffff0000ffffn), I64_AND, ...tee(L_Y),
  ...i64(10000n), I64_MUL, ...get(L_Y), ...i64(32n), I64_SHR_U, I64_ADD, I32_WRAP_I64,
  I32_STORE, 2, 0,
  ...get(P_OUT), ...i32(4), I32_ADD, ...set(P_OUT),
  // past the ',' and one space after it
  ...get(P_I), ...get(L_LEN), I32_ADD, ...i32(1), I32_ADD, ...tee(P_I),
  ...get(P_I), I32_LOAD8_U, 0, 0, ...i32(32), I32_EQ, I32_ADD, ...set(P_I),
  BR, 0,
  END, END,
  ...get(P_OUT), GLOBAL_SET, 0,
  ...get(P_I),
  END,
];

const FUNC = [
  ...vec([
    [1, I64],
    [1, I32],
    [1, I64],
  ]),
  ...BODY,
];
const MODULE = Uint8Array.from([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
  ...section(1, vec([[0x60, ...vec([[I32], [I32], [I32]]), ...vec([[I32]])]])),
  ...section(3, vec([[0]])),
  ...section(5, vec([[0x00, ...uleb(MEMORY_PAGES)]])),
  ...section(6, vec([[I32, 1, ...i32(0), END]])),
  ...section(
    7,
    vec([
      [...name('memory'), 2, 0],
      [...name('ids'), 0, 0],
      [...name('outEnd'), 3, 0],
    ]),
  ),
  ...section(10, vec([[...uleb(FUNC.length), ...FUNC]])),
]);

interface Kernel {
  readonly ids: (i: number, end: number, out: number) => number;
  readonly outEnd: { value: number };
  readonly bytes: Uint8Array;
  readonly words: Uint32Array;
}

// the part of the WebAssembly global used here (the project's lib has no WebAssembly types)
declare const WebAssembly: {
  readonly Module: new (bytes: Uint8Array) => object;
  readonly Instance: new (module: object) => { readonly exports: object };
};

function instantiate(): Kernel | null {
  try {
    const instance = new WebAssembly.Instance(new WebAssembly.Module(MODULE));
    const exports = instance.exports as unknown as {
      ids: Kernel['ids'];
      outEnd: Kernel['outEnd'];
      memory: { buffer: ArrayBuffer };
    };
    const buffer = exports.memory.buffer;
    return { ids: exports.ids, outEnd: exports.outEnd, bytes: new Uint8Array(buffer), words: new Uint32Array(buffer) };
  } catch {
    return null; // no WebAssembly here (e.g. --jitless): the scanner reads every byte itself
  }
}

const kernel = instantiate();

/**
 * A scanner's run of ids: the ids array (grown when full) and how many it holds, the next index in the chunk, and which
 * of the chunk's bytes the kernel's memory holds (set `loadedTo` to -1 for each new chunk).
 */
export interface IdRun {
  ids: Uint32Array<ArrayBuffer>;
  count: number;
  next: number;
  loadedFrom: number;
  loadedTo: number;
}

/**
 * Reads the run of ids starting at chunk[run.next] (at an id's first byte, or what stands there instead) into
 * run.ids from run.count on; leaves run.next at the first byte it did not read, always the start of an id. The chunk's
 * bytes are copied into the kernel's memory a slice at a time, each once, however often the scanner comes back.
 */
export function readIdRun(chunk: Uint8Array, run: IdRun, grow: (ids: Uint32Array) => Uint32Array<ArrayBuffer>): void {
  if (kernel === null) return;
  const n = chunk.length;
  while (n - run.next >= MIN_RUN_BYTES) {
    if (run.next < run.loadedFrom || run.loadedTo - run.next < MIN_RUN_BYTES) {
      const length = Math.min(SLICE, n - run.next);
      kernel.bytes.set(chunk.subarray(run.next, run.next + length), 0);
      run.loadedFrom = run.next;
      run.loadedTo = run.next + length;
    }
    const length = run.loadedTo - run.loadedFrom;
    const stop = kernel.ids(run.next - run.loadedFrom, length, OUT_AT);
    const read = (kernel.outEnd.value - OUT_AT) >> 2;
    while (run.count + read > run.ids.length) run.ids = grow(run.ids);
    run.ids.set(kernel.words.subarray(OUT_AT >> 2, (OUT_AT >> 2) + read), run.count);
    run.count += read;
    run.next = run.loadedFrom + stop;
    // it stopped at something else than the end of what it holds: the scanner reads that
    if (stop + LOOKAHEAD <= length) return;
  }
}
