// The id kernel bound to a shared memory (the scan thread's ring): views of that memory are read where they lie,
// anything else is copied in, and both read the same ids. Its own file: binding changes the module's kernel.
import { describe, expect, it } from 'vitest';
import { sharedWasmMemory } from '../wasm/wasm-binary.js';
import { bindIdRunKernel, ID_RUN_KERNEL_BYTES, readIdRun, type IdRun } from './id-run-kernel.js';

const grow = (ids: Uint32Array): Uint32Array<ArrayBuffer> => {
  const grown = new Uint32Array(ids.length * 2);
  grown.set(ids);
  return grown;
};
const run = (): IdRun => ({ ids: new Uint32Array(4), count: 0, next: 0, loadedFrom: 0, loadedTo: -1 });

describe('the id kernel over a shared memory', () => {
  it('reads views of the memory in place, up to their last byte, and other chunks as before', () => {
    const ringBytes = 1024 * 1024;
    const memory = sharedWasmMemory(ringBytes + ID_RUN_KERNEL_BYTES)!;
    expect(bindIdRunKernel(memory, ringBytes + 4)).toBe(false); // its own bytes must be 8-aligned
    expect(bindIdRunKernel(memory, ringBytes + 8)).toBe(false); // and fit
    expect(bindIdRunKernel(memory, ringBytes)).toBe(true);
    const ids = Array.from({ length: 40_000 }, (_, i) => (i * 48271) % 152_064);
    const text = new TextEncoder().encode(`${ids.map((v, i) => `${v}${i % 5 === 0 ? ', ' : ','}`).join('')}9]`);
    const ring = new Uint8Array(memory.buffer, 0, ringBytes);
    // a view that ends where the kernel's own bytes begin: its last ids are read without reading past it
    const view = ring.subarray(ringBytes - text.length, ringBytes);
    view.set(text);
    for (const chunk of [view, Uint8Array.from(text)]) {
      const r = run();
      readIdRun(chunk, r, grow);
      expect(Array.from(r.ids.subarray(0, r.count))).toEqual(ids.slice(0, r.count));
      // the last few ids are the scanner's (the kernel reads 9 bytes at an id), then '9]'
      expect(r.count).toBeGreaterThan(ids.length - 4);
      expect(new TextDecoder().decode(chunk.subarray(r.next))).toBe(
        `${ids
          .slice(r.count)
          .map((v, i) => `${v}${(r.count + i) % 5 === 0 ? ', ' : ','}`)
          .join('')}9]`,
      );
    }
  });
});
