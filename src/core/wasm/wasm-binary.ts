// The WebAssembly binary format as far as the project's hand-encoded kernels use it (core spec: MVP instructions and
// memory.copy):
// LEB128 numbers, vectors, sections, names, the opcodes, and the runtime's few members. The kernels
// (hashing/v1-token-mix.ts, hashing/block-sha256-kernel.ts, relay/id-run-kernel.ts) are encoded instruction by
// instruction: no toolchain, no I/O.

export const WASM_HEADER: readonly number[] = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]; // magic, version 1

// value types
export const I32 = 0x7f;
export const I64 = 0x7e;

export const op = {
  block: 0x02,
  loop: 0x03,
  br: 0x0c,
  brIf: 0x0d,
  if: 0x04,
  end: 0x0b,
  return: 0x0f,
  select: 0x1b,
  void: 0x40,
  localGet: 0x20,
  localSet: 0x21,
  localTee: 0x22,
  globalSet: 0x24,
  i32Load: 0x28,
  i64Load: 0x29,
  i32Load8U: 0x2d,
  i32Store: 0x36,
  i64Store: 0x37,
  i32Const: 0x41,
  i64Const: 0x42,
  i32Eqz: 0x45,
  i32Eq: 0x46,
  i32Ne: 0x47,
  i32LtU: 0x49,
  i32GtU: 0x4b,
  i32GeU: 0x4f,
  i64Eq: 0x51,
  i64Ne: 0x52,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  i32Mul: 0x6c,
  i32And: 0x71,
  i32Or: 0x72,
  i32Xor: 0x73,
  i32Shl: 0x74,
  i32ShrU: 0x76,
  i32Rotr: 0x78,
  i64Ctz: 0x7a,
  i64Add: 0x7c,
  i64Sub: 0x7d,
  i64Mul: 0x7e,
  i64And: 0x83,
  i64Or: 0x84,
  i64Xor: 0x85,
  i64Shl: 0x86,
  i64ShrU: 0x88,
  i32WrapI64: 0xa7,
  i64ExtendI32U: 0xad,
} as const;

/** memory.copy(destination, source, bytes) on memory 0 */
export const MEMORY_COPY: readonly number[] = [0xfc, 0x0a, 0x00, 0x00];

export function uleb(n: number): number[] {
  const out: number[] = [];
  let rest = n >>> 0;
  do {
    let b = rest & 0x7f;
    rest >>>= 7;
    if (rest !== 0) b |= 0x80;
    out.push(b);
  } while (rest !== 0);
  return out;
}

/** signed LEB128 of a 64-bit value (an i32 constant is the same encoding of its value) */
export function sleb(value: bigint | number): number[] {
  let v = BigInt.asIntN(64, BigInt(value));
  const out: number[] = [];
  for (;;) {
    const b = Number(v & 0x7fn);
    v >>= 7n;
    if ((v === 0n && (b & 0x40) === 0) || (v === -1n && (b & 0x40) !== 0)) return [...out, b];
    out.push(b | 0x80);
  }
}

export const vec = (items: readonly (readonly number[])[]): number[] => [...uleb(items.length), ...items.flat()];
export const section = (id: number, bytes: readonly number[]): number[] => [id, ...uleb(bytes.length), ...bytes];
export const name = (text: string): number[] => vec([...text].map((c) => [c.charCodeAt(0)]));

export const localGet = (local: number): number[] => [op.localGet, local];
export const localSet = (local: number): number[] => [op.localSet, local];
export const localTee = (local: number): number[] => [op.localTee, local];
export const i32Const = (v: number): number[] => [op.i32Const, ...sleb(v | 0)];
export const i64Const = (v: bigint): number[] => [op.i64Const, ...sleb(v)];

// lib ES2023 declares no WebAssembly: the few members used here
export interface WasmMemory {
  /** a SharedArrayBuffer for a shared memory */
  readonly buffer: ArrayBuffer | SharedArrayBuffer;
  grow(pages: number): number;
}
export interface WasmApi {
  readonly Module: new (bytes: Uint8Array) => object;
  readonly Instance: new (
    module: object,
    imports?: Readonly<Record<string, Readonly<Record<string, unknown>>>>,
  ) => { readonly exports: Readonly<Record<string, unknown>> };
  readonly Memory: new (descriptor: { initial: number; maximum?: number; shared?: boolean }) => WasmMemory;
}

export const WASM_PAGE_BYTES = 64 * 1024;

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * The runtime, or null where WebAssembly is unavailable (e.g. `node --jitless`) or the host is big-endian (the kernels'
 * callers read and write module memory through typed arrays, which WebAssembly defines as little-endian).
 */
export function wasmApi(): WasmApi | null {
  const api = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  return LITTLE_ENDIAN && api !== undefined ? api : null;
}

/**
 * A module of one function (i32 parameters, no result) and one memory of a page, both exported: the whole of the
 * project's single-function kernels (wabt writes their text sources as these bytes).
 */
export function singleFunctionModule(fn: { name: string; params: number; code: readonly number[] }): Uint8Array {
  const params = Array.from({ length: fn.params }, () => [I32]);
  return new Uint8Array([
    ...WASM_HEADER,
    ...section(1, vec([[0x60, ...vec(params), ...vec([])]])), // type 0: (i32 …) -> ()
    ...section(3, vec([[0]])), // function 0 has type 0
    ...section(5, vec([[0x00, 1]])), // one memory, min 1 page, no max
    ...section(
      7,
      vec([
        [...name(fn.name), 0x00, 0],
        [...name('memory'), 0x02, 0],
      ]),
    ), // exports
    ...section(10, vec([[...uleb(fn.code.length), ...fn.code]])),
  ]);
}

/** A kernel's exports (a module without imports), or null where there is no runtime or the module does not load. */
export function instantiateKernel(bytes: Uint8Array): Readonly<Record<string, unknown>> | null {
  const api = wasmApi();
  if (api === null) return null;
  try {
    return new api.Instance(new api.Module(bytes)).exports;
  } catch {
    return null;
  }
}

/** A fixed-size memory threads can share (a kernel on one thread reads what another wrote); null where unavailable. */
export function sharedWasmMemory(bytes: number): WasmMemory | null {
  const api = wasmApi();
  if (api === null) return null;
  const pages = Math.ceil(bytes / WASM_PAGE_BYTES);
  try {
    return new api.Memory({ initial: pages, maximum: pages, shared: true });
  } catch {
    return null;
  }
}
