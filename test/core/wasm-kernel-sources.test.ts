// The hand-encoded WebAssembly kernels against their text sources: each `.wat` beside a kernel, assembled by wabt (the
// reference toolchain's wat2wasm, built for Node), must be the module the TypeScript encoder produces. wabt writes
// no name section here (write_debug_names: false), so the modules can be compared section by section. The one
// freedom the binary format leaves them is how a function's locals are declared: runs of (count, type), which wabt
// always merges (two runs of i64 side by side become one) while the encoder may keep them apart (id-run-kernel.ts
// declares each stream's locals as its own runs). So every section but the code is compared byte for byte, and each
// function body as its locals' types, one per local, and its instruction bytes, byte for byte.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import initWabt from 'wabt';
import { beforeAll, describe, expect, it } from 'vitest';
import { sha256ModuleBytes } from '../../src/core/hashing/block-sha256-kernel.js';
import { mixModuleBytes } from '../../src/core/hashing/v1-token-mix.js';
import { idRunKernelModule } from '../../src/core/relay/id-run-kernel.js';

type Wabt = Awaited<ReturnType<typeof initWabt>>;

const sourceOf = (path: string): string =>
  readFileSync(fileURLToPath(new URL(`../../src/core/${path}`, import.meta.url)), 'utf8');

/** memory.copy is bulk memory; a shared memory is the threads proposal (both in Node 20's V8) */
const FEATURES = { bulk_memory: true, threads: true };

function assemble(wabt: Wabt, name: string, text: string): Uint8Array {
  const module = wabt.parseWat(name, text, FEATURES);
  try {
    module.resolveNames();
    // validate() takes the features too (wabt's index.js reads them; its index.d.ts does not declare them)
    (module as unknown as { validate(features: typeof FEATURES): void }).validate(FEATURES);
    return module.toBinary({ write_debug_names: false }).buffer;
  } finally {
    module.destroy();
  }
}

/** LEB128 (unsigned) at bytes[at]: its value and the index after it */
function readUleb(bytes: Uint8Array, at: number): [number, number] {
  let value = 0;
  let shift = 0;
  for (;;) {
    const b = bytes[at++]!;
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if ((b & 0x80) === 0) return [value, at];
  }
}

interface FunctionBody {
  /** one entry per local, its value type */
  readonly locals: number[];
  /** the instructions, to the function's `end` */
  readonly code: number[];
}

/** the function bodies of a code section's payload */
function functionBodies(payload: Uint8Array): FunctionBody[] {
  let [count, at] = readUleb(payload, 0);
  const bodies: FunctionBody[] = [];
  while (count-- > 0) {
    const [size, start] = readUleb(payload, at);
    const end = start + size;
    let [runs, p] = readUleb(payload, start);
    const locals: number[] = [];
    while (runs-- > 0) {
      const [n, q] = readUleb(payload, p);
      locals.push(...Array<number>(n).fill(payload[q]!));
      p = q + 1;
    }
    bodies.push({ locals, code: [...payload.subarray(p, end)] });
    at = end;
  }
  return bodies;
}

/** the module as its sections in order: id and payload, the code section's payload as its function bodies */
function sections(bytes: Uint8Array): { id: number; payload: number[] | FunctionBody[] }[] {
  expect([...bytes.subarray(0, 8)]).toEqual([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
  const out: { id: number; payload: number[] | FunctionBody[] }[] = [];
  let at = 8;
  while (at < bytes.length) {
    const id = bytes[at]!;
    const [size, start] = readUleb(bytes, at + 1);
    const payload = bytes.subarray(start, start + size);
    out.push({ id, payload: id === 10 ? functionBodies(payload) : [...payload] });
    at = start + size;
  }
  return out;
}

/** the id kernel's text in bindIdRunKernel's form: the shared memory imported, no memory exported */
function sharedForm(text: string, pages: number): string {
  const own = '  (memory $memory 4)\n';
  const exported = '  (export "memory" (memory $memory))\n';
  expect(text).toContain(own);
  expect(text).toContain(exported);
  return text.replace(own, `  (import "k" "memory" (memory $memory ${pages} ${pages} shared))\n`).replace(exported, '');
}

let wabt: Wabt;
beforeAll(async () => {
  wabt = await initWabt();
});

describe('the WebAssembly kernels are their .wat sources', () => {
  it('v1-token-mix.wat assembles to exactly the bytes of mixModuleBytes()', () => {
    const assembled = assemble(wabt, 'v1-token-mix.wat', sourceOf('hashing/v1-token-mix.wat'));
    // nothing differs here, not even the locals' runs
    expect([...mixModuleBytes()]).toEqual([...assembled]);
  });

  it('block-sha256.wat assembles to exactly the bytes of sha256ModuleBytes()', () => {
    const assembled = assemble(wabt, 'block-sha256.wat', sourceOf('hashing/block-sha256.wat'));
    expect([...sha256ModuleBytes()]).toEqual([...assembled]);
  });

  it('id-run-kernel.wat assembles to the kernel with a memory of its own', () => {
    const assembled = assemble(wabt, 'id-run-kernel.wat', sourceOf('relay/id-run-kernel.wat'));
    const encoded = idRunKernelModule();
    expect(sections(encoded)).toEqual(sections(assembled));
    // the bodies hold every instruction: ids and ids2, with their 4 and 16 locals (parameters included in neither)
    const code = sections(encoded).find((s) => s.id === 10)!.payload as FunctionBody[];
    expect(code.map((f) => f.locals.length)).toEqual([4, 12]);
    expect(code.every((f) => f.code.length > 200 && f.code.at(-1) === 0x0b)).toBe(true);
  });

  it("id-run-kernel.wat, its memory imported as bindIdRunKernel's shared one, is that module too", () => {
    for (const pages of [20, 516]) {
      const text = sharedForm(sourceOf('relay/id-run-kernel.wat'), pages);
      expect(sections(idRunKernelModule(pages))).toEqual(sections(assemble(wabt, 'shared.wat', text)));
    }
  });

  it('a one-constant change to a source is caught (the comparison reads every instruction)', () => {
    const mix = sourceOf('hashing/v1-token-mix.wat').replace('i64.const 6\n', 'i64.const 5\n');
    expect([...assemble(wabt, 'changed.wat', mix)]).not.toEqual([...mixModuleBytes()]);
    // Σ1's first rotation in the rounds
    const sha = sourceOf('hashing/block-sha256.wat').replace('i32.const 6\n', 'i32.const 5\n');
    expect([...assemble(wabt, 'changed.wat', sha)]).not.toEqual([...sha256ModuleBytes()]);
    const ids = sourceOf('relay/id-run-kernel.wat');
    // the ',' test of stream b's first step in ids2 (the 3rd occurrence): one byte of one function
    let seen = 0;
    const changed = ids.replace(/i64\.const 0x1c /g, (m) => (++seen === 3 ? 'i64.const 0x1d ' : m));
    expect(seen).toBe(5);
    const [a, b] = [sections(idRunKernelModule()), sections(assemble(wabt, 'changed.wat', changed))];
    expect(b).not.toEqual(a);
    expect(b.filter((s) => s.id !== 10)).toEqual(a.filter((s) => s.id !== 10));
  });
});
