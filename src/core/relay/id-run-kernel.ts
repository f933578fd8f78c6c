// The prompt scanner's innermost loop as a small WebAssembly function: a run of token ids written `id,` or `id, `
// (JSON.stringify, Python's json.dumps). JavaScript reads an id digit by digit and mispredicts where each id ends
// (~25 cycles an id); here each id is one 8-byte load, its length from the first non-digit byte (a bit trick, no
// branch) and its value from three multiplies that combine the digits pairwise — about half the time per byte.
//
// The kernel reads only what it is sure of — ids of 1 to 7 digits (below 2^32 always), each followed by ',' and at
// most one space — and stops at the first byte that is anything else, at the start of an id, where the scanner's own
// byte-by-byte loop takes over (an id that is longer, other whitespace, the ']', a chunk's last bytes). The module is
// assembled here from its instructions (wasm/wasm-binary.ts); where WebAssembly is not available (or the host is
// big-endian) the scanner reads every byte itself.

import {
  I32,
  I64,
  localGet,
  localSet,
  localTee,
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

// the module's memory: input slices at 0, the ids read at OUT_AT (a slice of SLICE bytes holds at most SLICE/2 ids)
const SLICE = 64 * 1024;
const OUT_AT = SLICE;
const MEMORY_PAGES = 4; // 256 KB: SLICE bytes in, 2 * SLICE bytes of ids out
/** a run shorter than this is left to the scanner (the call and the copies cost more than they save) */
const MIN_RUN_BYTES = 32;
/** the kernel reads 8 bytes at an id, and the byte after its ',' */
const LOOKAHEAD = 9;

const bytesOf = (b: number): bigint => BigInt(b) * 0x0101010101010101n;

// ids(i, end, out) -> where it stopped; the ids go to out, out's end to the global outEnd
const [P_I, P_END, P_OUT, L_X, L_LEN, L_Y] = [0, 1, 2, 3, 4, 5];
// prettier-ignore
const BODY: number[] = [
  op.block, op.void, op.loop, op.void,
  // room for an id's 8 bytes and the byte after its ','
  ...localGet(P_I), ...i32Const(LOOKAHEAD), op.i32Add, ...localGet(P_END), op.i32GtU, op.brIf, 1,
  // x: the 8 bytes at i, digits turned into their values
  ...localGet(P_I), op.i64Load, 0, 0, ...i64Const(bytesOf(0x30)), op.i64Xor, ...localTee(L_X),
  // the high bit of each byte that is no digit (x & 0x7f) + 0x76 overflows 0x7f past 9; a byte ≥ 0x80 is none
  ...i64Const(bytesOf(0x7f)), op.i64And, ...i64Const(bytesOf(0x76)), op.i64Add, ...localGet(L_X), op.i64Or, ...i64Const(bytesOf(0x80)), op.i64And,
  // the id's length: the first such byte; only 1 to 7 digits go on
  op.i64Ctz, op.i32WrapI64, ...i32Const(3), op.i32ShrU, ...localTee(L_LEN),
  ...i32Const(1), op.i32Sub, ...i32Const(6), op.i32GtU, op.brIf, 1,
  // followed by ','
  ...localGet(P_I), ...localGet(L_LEN), op.i32Add, op.i32Load8U, 0, 0, ...i32Const(44), op.i32Ne, op.brIf, 1,
  ...localGet(P_OUT),
  // the digits moved to the top of 8 places (leading zeros), then combined in pairs, fours, eights
  ...localGet(L_X), ...i64Const(64n), ...localGet(L_LEN), ...i32Const(3), op.i32Shl, op.i64ExtendI32U, op.i64Sub, op.i64Shl, ...localTee(L_Y),
  ...i64Const(10n), op.i64Mul, ...localGet(L_Y), ...i64Const(8n), op.i64ShrU, op.i64Add, ...i64Const(0x00ff00ff00ff00ffn), op.i64And, ...localTee(L_Y),
  ...i64Const(100n), op.i64Mul, ...localGet(L_Y), ...i64Const(16n), op.i64ShrU, op.i64Add, ...i64Const(0x0000ffff0000ffffn), op.i64And, ...localTee(L_Y),
  ...i64Const(10000n), op.i64Mul, ...localGet(L_Y), ...i64Const(32n), op.i64ShrU, op.i64Add, op.i32WrapI64,
  op.i32Store, 2, 0,
  ...localGet(P_OUT), ...i32Const(4), op.i32Add, ...localSet(P_OUT),
  // past the ',' and one space after it
  ...localGet(P_I), ...localGet(L_LEN), op.i32Add, ...i32Const(1), op.i32Add, ...localTee(P_I),
  ...localGet(P_I), op.i32Load8U, 0, 0, ...i32Const(32), op.i32Eq, op.i32Add, ...localSet(P_I),
  op.br, 0,
  op.end, op.end,
  ...localGet(P_OUT), op.globalSet, 0,
  ...localGet(P_I),
  op.end,
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
  ...WASM_HEADER,
  ...section(1, vec([[0x60, ...vec([[I32], [I32], [I32]]), ...vec([[I32]])]])),
  ...section(3, vec([[0]])),
  ...section(5, vec([[0x00, ...uleb(MEMORY_PAGES)]])),
  ...section(6, vec([[I32, 1, ...i32Const(0), op.end]])),
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

function instantiate(): Kernel | null {
  const api = wasmApi();
  if (api === null) return null;
  try {
    const instance = new api.Instance(new api.Module(MODULE));
    const exports = instance.exports as unknown as {
      ids: Kernel['ids'];
      outEnd: Kernel['outEnd'];
      memory: { buffer: ArrayBuffer };
    };
    const buffer = exports.memory.buffer;
    return { ids: exports.ids, outEnd: exports.outEnd, bytes: new Uint8Array(buffer), words: new Uint32Array(buffer) };
  } catch {
    return null;
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
