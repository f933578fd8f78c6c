// The prompt scanner's innermost loop as a small WebAssembly function: a run of token ids written `id,` or `id, `
// (JSON.stringify, Python's json.dumps). JavaScript reads an id digit by digit and mispredicts where each id ends
// (~25 cycles an id); here each id is one 8-byte load, its length from the first non-digit byte (a bit trick, no
// branch), its ',' and space from the same 8 bytes, and its value from three multiplies that combine the digits
// pairwise. Each id still waits on the one before (where it starts), so a long stretch is read as two streams, its
// halves, side by side: the CPU overlaps their waits, about twice the ids per cycle.
//
// The kernel reads only what it is sure of — ids of 1 to 7 digits (below 2^32 always), each followed by ',' and at
// most one space — and stops at the first byte that is anything else, at the start of an id, where the scanner's own
// byte-by-byte loop takes over (an id that is longer, other whitespace, the ']', a chunk's last bytes). The module is
// assembled here from its instructions (wasm/wasm-binary.ts); its commented text is id-run-kernel.wat, which a test
// assembles with wabt and compares with these bytes (change both together). Where WebAssembly is not available (or
// the host is big-endian) the scanner reads every byte itself.

import {
  I32,
  I64,
  localGet,
  localSet,
  localTee,
  MEMORY_COPY,
  WASM_PAGE_BYTES,
  type WasmMemory,
  i32Const,
  i64Const,
  name,
  op,
  section,
  uleb,
  vec,
  wasmApi,
  WASM_HEADER,
} from '../wasm/wasm-binary.js';

// the module's memory: input slices at 0, the ids read at OUT_AT (a slice of SLICE bytes holds at most SLICE/2 ids; the
// two-stream function keeps the second stream's ids after room for the first's, then moves them up behind them)
const SLICE = 64 * 1024;
const OUT_AT = SLICE;
const MEMORY_PAGES = 4; // 256 KB: SLICE bytes in, 2 * SLICE bytes of ids out, and room to spare
/** a run shorter than this is left to the scanner (the call and the copies cost more than they save) */
const MIN_RUN_BYTES = 32;
/** a stretch this long is read as two streams side by side */
const TWO_STREAM_BYTES = 1024;
/** the kernel reads 8 bytes at an id, and the byte after them (a 7-digit id's space) */
const LOOKAHEAD = 9;

const bytesOf = (b: number): bigint => BigInt(b) * 0x0101010101010101n;

/** one stream's locals: where it is, where it must stop, where its ids go, and the step's scratch */
interface Stream {
  readonly i: number;
  readonly end: number;
  readonly out: number;
  readonly x: number;
  readonly len: number;
  readonly y: number;
  readonly w: number;
}

/**
 * One id of a stream, or a branch to `exit` (the label depth) before anything changed: ids of 1 to 7 digits, each
 * followed by ',' and at most one space. Two streams' steps in one loop overlap in the CPU: each step waits on its
 * own loads and bit tricks (~20 cycles), not on the other's.
 */
function idStep(s: Stream, exit: number): number[] {
  // prettier-ignore
  return [
    // room for an id's 8 bytes and the byte after them
    ...localGet(s.i), ...i32Const(LOOKAHEAD), op.i32Add, ...localGet(s.end), op.i32GtU, op.brIf, exit,
    // x: the 8 bytes at i, digits turned into their values
    ...localGet(s.i), op.i64Load, 0, 0, ...i64Const(bytesOf(0x30)), op.i64Xor, ...localTee(s.x),
    // the high bit of each byte that is no digit (x & 0x7f) + 0x76 overflows 0x7f past 9; a byte ≥ 0x80 is none
    ...i64Const(bytesOf(0x7f)), op.i64And, ...i64Const(bytesOf(0x76)), op.i64Add, ...localGet(s.x), op.i64Or, ...i64Const(bytesOf(0x80)), op.i64And,
    // the id's length: the first such byte; only 1 to 7 digits go on
    op.i64Ctz, op.i32WrapI64, ...i32Const(3), op.i32ShrU, ...localTee(s.len),
    ...i32Const(1), op.i32Sub, ...i32Const(6), op.i32GtU, op.brIf, exit,
    // w: x from the byte after the digits, which must be ',' (0x2c ^ 0x30): no second load on the way to the next id
    ...localGet(s.x), ...localGet(s.len), ...i32Const(3), op.i32Shl, op.i64ExtendI32U, op.i64ShrU, ...localTee(s.w),
    ...i64Const(0xffn), op.i64And, ...i64Const(0x1cn), op.i64Ne, op.brIf, exit,
    ...localGet(s.out),
    // the digits moved to the top of 8 places (leading zeros), then combined in pairs, fours, eights
    ...localGet(s.x), ...i64Const(64n), ...localGet(s.len), ...i32Const(3), op.i32Shl, op.i64ExtendI32U, op.i64Sub, op.i64Shl, ...localTee(s.y),
    ...i64Const(10n), op.i64Mul, ...localGet(s.y), ...i64Const(8n), op.i64ShrU, op.i64Add, ...i64Const(0x00ff00ff00ff00ffn), op.i64And, ...localTee(s.y),
    ...i64Const(100n), op.i64Mul, ...localGet(s.y), ...i64Const(16n), op.i64ShrU, op.i64Add, ...i64Const(0x0000ffff0000ffffn), op.i64And, ...localTee(s.y),
    ...i64Const(10000n), op.i64Mul, ...localGet(s.y), ...i64Const(32n), op.i64ShrU, op.i64Add, op.i32WrapI64,
    op.i32Store, 2, 0,
    ...localGet(s.out), ...i32Const(4), op.i32Add, ...localSet(s.out),
    // past the ',' and one space after it: the byte after the ',' in x (0x20 ^ 0x30), for 7 digits the byte past x
    ...localGet(s.i), ...localGet(s.len), op.i32Add, ...i32Const(1), op.i32Add,
    ...localGet(s.i), op.i32Load8U, 0, 8, ...i32Const(32), op.i32Eq,
    ...localGet(s.w), ...i64Const(8n), op.i64ShrU, ...i64Const(0xffn), op.i64And, ...i64Const(0x10n), op.i64Eq,
    ...localGet(s.len), ...i32Const(7), op.i32Eq, op.select,
    op.i32Add, ...localSet(s.i),
  ];
}

/** `loop { steps; }` until one of them exits */
// prettier-ignore
const loopOf = (...steps: ((exit: number) => number[])[]): number[] => [
  op.block, op.void, op.loop, op.void,
  ...steps.flatMap((step) => step(1)),
  op.br, 0, op.end, op.end,
];

// ids(i, end, out) -> where it stopped; the ids go to out, out's end to the global outEnd
const ONE: Stream = { i: 0, end: 1, out: 2, x: 3, len: 4, y: 5, w: 6 };
// prettier-ignore
const ONE_LOCALS = vec([[1, I64], [1, I32], [2, I64]]);
// prettier-ignore
const ONE_BODY: number[] = [
  ...loopOf((exit) => idStep(ONE, exit)),
  ...localGet(ONE.out), op.globalSet, 0,
  ...localGet(ONE.i),
  op.end,
];

// ids2(i, split, end, out) -> where it stopped: the ids from i to split (stream a) and from split on (stream b), read
// side by side; split must be an id's first byte. If a stops short of split, only a's ids count (b's are dropped).
const [P_SPLIT, L_END_A, L_OUT_B0] = [1, 6, 7];
const A: Stream = { i: 0, end: L_END_A, out: 3, x: 8, len: 9, y: 10, w: 11 };
const B: Stream = { i: 4, end: 2, out: 5, x: 12, len: 13, y: 14, w: 15 };
// prettier-ignore
const TWO_LOCALS = vec([[4, I32], [1, I64], [1, I32], [2, I64], [1, I64], [1, I32], [2, I64]]);
// prettier-ignore
const TWO_BODY: number[] = [
  ...localGet(P_SPLIT), ...localSet(B.i),
  // b's ids after room for all of a's (an id takes 2 bytes at least)
  ...localGet(A.out), ...localGet(P_SPLIT), ...localGet(A.i), op.i32Sub, ...i32Const(1), op.i32ShrU, ...i32Const(2), op.i32Shl, op.i32Add, ...i32Const(8), op.i32Add,
  ...localTee(B.out), ...localSet(L_OUT_B0),
  // a steps while i < split
  ...localGet(P_SPLIT), ...i32Const(LOOKAHEAD - 1), op.i32Add, ...localSet(L_END_A),
  ...loopOf((exit) => idStep(A, exit), (exit) => idStep(B, exit)),
  ...loopOf((exit) => idStep(A, exit)),
  ...localGet(A.i), ...localGet(P_SPLIT), op.i32Ne, op.if, op.void,
  ...localGet(A.out), op.globalSet, 0, ...localGet(A.i), op.return,
  op.end,
  ...loopOf((exit) => idStep(B, exit)),
  // b's ids moved up behind a's
  ...localGet(A.out), ...localGet(L_OUT_B0), ...localGet(B.out), ...localGet(L_OUT_B0), op.i32Sub, ...MEMORY_COPY,
  ...localGet(A.out), ...localGet(B.out), ...localGet(L_OUT_B0), op.i32Sub, op.i32Add, op.globalSet, 0,
  ...localGet(B.i),
  op.end,
];

const code = (locals: number[], body: number[]): number[] => {
  const f = [...locals, ...body];
  return [...uleb(f.length), ...f];
};
const TYPES = section(
  1,
  vec([
    [0x60, ...vec([[I32], [I32], [I32]]), ...vec([[I32]])],
    [0x60, ...vec([[I32], [I32], [I32], [I32]]), ...vec([[I32]])],
  ]),
);
const FUNCTIONS = section(3, vec([[0], [1]]));
const OUT_END = section(6, vec([[I32, 1, ...i32Const(0), op.end]]));
const CODE = section(10, vec([code(ONE_LOCALS, ONE_BODY), code(TWO_LOCALS, TWO_BODY)]));
const exportsOf = (memory: boolean): number[] =>
  section(
    7,
    vec([
      ...(memory ? [[...name('memory'), 2, 0]] : []),
      [...name('ids'), 0, 0],
      [...name('ids2'), 0, 1],
      [...name('outEnd'), 3, 0],
    ]),
  );
/** the module with a memory of its own */
const OWN_MEMORY = Uint8Array.from([
  ...WASM_HEADER,
  ...TYPES,
  ...FUNCTIONS,
  ...section(5, vec([[0x00, ...uleb(MEMORY_PAGES)]])),
  ...OUT_END,
  ...exportsOf(true),
  ...CODE,
]);
/** the module over a shared memory of `pages` pages it imports as k.memory */
const sharedMemoryModule = (pages: number): Uint8Array =>
  Uint8Array.from([
    ...WASM_HEADER,
    ...TYPES,
    ...section(2, vec([[...name('k'), ...name('memory'), 0x02, 0x03, ...uleb(pages), ...uleb(pages)]])),
    ...FUNCTIONS,
    ...OUT_END,
    ...exportsOf(false),
    ...CODE,
  ]);

/**
 * The module's bytes: with a memory of its own (no argument), or over a shared memory of `sharedPages` pages. Its text
 * is id-run-kernel.wat, checked against these bytes by test/core/wasm-kernel-sources.test.ts.
 */
export const idRunKernelModule = (sharedPages?: number): Uint8Array =>
  sharedPages === undefined ? Uint8Array.from(OWN_MEMORY) : sharedMemoryModule(sharedPages);

interface Kernel {
  readonly ids: (i: number, end: number, out: number) => number;
  readonly ids2: (i: number, split: number, end: number, out: number) => number;
  readonly outEnd: { value: number };
  /** all of the kernel's memory */
  readonly bytes: Uint8Array;
  readonly words: Uint32Array;
  /** where chunks that are not views of its memory are copied, a slice at a time, and where the ids go */
  readonly inputAt: number;
  readonly outAt: number;
}

function instantiate(bytes: Uint8Array, memory: WasmMemory | null, at: number): Kernel | null {
  const api = wasmApi();
  if (api === null) return null;
  try {
    const instance = new api.Instance(new api.Module(bytes), memory === null ? {} : { k: { memory } });
    const exports = instance.exports as unknown as {
      ids: Kernel['ids'];
      ids2: Kernel['ids2'];
      outEnd: Kernel['outEnd'];
      memory?: WasmMemory;
    };
    const buffer = (memory ?? exports.memory!).buffer;
    return {
      ids: exports.ids,
      ids2: exports.ids2,
      outEnd: exports.outEnd,
      bytes: new Uint8Array(buffer),
      words: new Uint32Array(buffer),
      inputAt: at,
      outAt: at + OUT_AT,
    };
  } catch {
    return null;
  }
}

/** One instance of the kernel and its memory: its owner (a scan thread, a relay) keeps one and passes it along. */
export type IdRunKernel = Kernel;

/** A kernel with a memory of its own; null where WebAssembly is not available. */
export function createIdRunKernel(): IdRunKernel | null {
  return instantiate(OWN_MEMORY, null, 0);
}

/** the bytes of a shared memory the kernel needs for itself (bindIdRunKernel) */
export const ID_RUN_KERNEL_BYTES = MEMORY_PAGES * WASM_PAGE_BYTES;

/**
 * A kernel over `memory` (a shared memory, sharedWasmMemory), with its own ID_RUN_KERNEL_BYTES at byte `at`: a chunk
 * that is a view of that memory (a thread's ring another thread writes into) is read where it lies, without its copy
 * into the kernel. Null where that cannot be done.
 */
export function bindIdRunKernel(memory: WasmMemory, at: number): IdRunKernel | null {
  if (at % 8 !== 0 || at + ID_RUN_KERNEL_BYTES > memory.buffer.byteLength) return null;
  return instantiate(sharedMemoryModule(memory.buffer.byteLength / WASM_PAGE_BYTES), memory, at);
}

/**
 * Where a second stream can start in bytes[from, end): the first byte after a ',' (and one space) past the middle, if
 * it is a digit; -1 when the stretch is short or has no such place near its middle.
 */
function splitPoint(bytes: Uint8Array, from: number, end: number): number {
  if (end - from < TWO_STREAM_BYTES) return -1;
  const middle = from + ((end - from) >> 1);
  for (let at = middle; at < middle + 16; at++) {
    if (bytes[at] !== 44) continue;
    const start = bytes[at + 1] === 32 ? at + 2 : at + 1;
    const d = bytes[start]! - 48;
    return d >= 0 && d <= 9 ? start : -1;
  }
  return -1;
}

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
 * bytes are copied into the kernel's memory a slice at a time, each once, however often the scanner comes back — or,
 * for a view of that memory (bindIdRunKernel), read where they lie. With no kernel (null) it reads nothing.
 */
export function readIdRun(
  k: IdRunKernel | null,
  chunk: Uint8Array,
  run: IdRun,
  grow: (ids: Uint32Array) => Uint32Array<ArrayBuffer>,
): void {
  if (k === null) return;
  const n = chunk.length;
  // a view of the kernel's own memory is read where it lies
  const inPlace = chunk.buffer === k.bytes.buffer;
  while (n - run.next >= MIN_RUN_BYTES) {
    if (run.next < run.loadedFrom || run.loadedTo - run.next < MIN_RUN_BYTES) {
      const length = Math.min(SLICE, n - run.next);
      if (!inPlace) k.bytes.set(chunk.subarray(run.next, run.next + length), k.inputAt);
      run.loadedFrom = run.next;
      run.loadedTo = run.next + length;
    }
    // where chunk[loadedFrom] sits in the kernel's memory
    const base = inPlace ? chunk.byteOffset + run.loadedFrom : k.inputAt;
    const from = base + run.next - run.loadedFrom;
    const end = base + run.loadedTo - run.loadedFrom;
    const split = splitPoint(k.bytes, from, end);
    const stop = split === -1 ? k.ids(from, end, k.outAt) : k.ids2(from, split, end, k.outAt);
    const read = (k.outEnd.value - k.outAt) >> 2;
    while (run.count + read > run.ids.length) run.ids = grow(run.ids);
    run.ids.set(k.words.subarray(k.outAt >> 2, (k.outAt >> 2) + read), run.count);
    run.count += read;
    run.next = run.loadedFrom + stop - base;
    // it stopped at something else than the end of what it holds: the scanner reads that
    if (stop + LOOKAHEAD <= end) return;
  }
}
