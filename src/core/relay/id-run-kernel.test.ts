import { describe, expect, it } from 'vitest';
import { doubledUint32 } from '../tables/doubled-uint32.js';
import { sharedWasmMemory } from '../wasm/wasm-binary.js';
import { bindIdRunKernel, createIdRunKernel, ID_RUN_KERNEL_BYTES, readIdRun, type IdRun } from './id-run-kernel.js';

const enc = new TextEncoder();
const kernel = createIdRunKernel();
const run = (): IdRun => ({ ids: new Uint32Array(4), count: 0, next: 0, loadedFrom: 0, loadedTo: -1 });

describe('readIdRun (the WebAssembly kernel)', () => {
  it('reads a run of `id,` and `id, ` itself, across its slices, and stops at the first id it does not take', () => {
    const ids = Array.from({ length: 30_000 }, (_, i) => (i * 7919) % 9_999_999);
    // more than one 64 KB slice; then an 8-digit id, which the scanner reads itself
    const text = `${ids.map((v, i) => `${v}${i % 3 === 0 ? ', ' : ','}`).join('')}12345678,1]`;
    const r = run();
    readIdRun(kernel, enc.encode(text), r, doubledUint32);
    expect(Array.from(r.ids.subarray(0, r.count))).toEqual(ids);
    expect(text.slice(r.next)).toBe('12345678,1]');
  });

  // what follows 40 ids, and where the kernel leaves it (one space after a ',' is part of the run)
  it.each([
    [']', ']'],
    ['"a",', '"a",'],
    ['-1,', '-1,'],
    ['1 ,2,', '1 ,2,'],
    ['1.5,', '1.5,'],
    ['1é,', '1é,'],
    ['  1,', ' 1,'],
    ['\t1,', '\t1,'],
    ['123456789,', '123456789,'],
  ])('leaves what is not a run (%j) to the scanner, at an id start (%j)', (rest, left) => {
    const text = `${'7,'.repeat(40)}${rest}${'3,'.repeat(40)}`;
    const r = run();
    readIdRun(kernel, enc.encode(text), r, doubledUint32);
    expect(r.count).toBe(40);
    expect(text.slice(r.next)).toBe(`${left}${'3,'.repeat(40)}`);
  });

  it('reads a long stretch as two streams and keeps only what one stream would have read', () => {
    // long enough for two streams; the odd thing sits in the first half, at the middle, or in the second half
    const before = Array.from({ length: 1500 }, (_, i) => (i * 48271) % 152_064);
    for (const [rest, left] of [
      ['-1,', '-1,'],
      ['123456789,', '123456789,'],
      ['  1,', ' 1,'],
      [']', ']'],
    ] as const) {
      for (const share of [0.1, 0.5, 0.9]) {
        const cut = Math.floor(before.length * share);
        const head = before.slice(0, cut);
        const text = `${head.map((v, i) => `${v}${i % 2 === 0 ? ', ' : ','}`).join('')}${rest}${'3,'.repeat(2000)}`;
        const r = run();
        readIdRun(kernel, enc.encode(text), r, doubledUint32);
        expect(Array.from(r.ids.subarray(0, r.count)), `${rest} at ${share}`).toEqual(head);
        expect(text.slice(r.next)).toBe(`${left}${'3,'.repeat(2000)}`);
      }
    }
  });

  it('reads 7-digit ids and the space after them in both streams', () => {
    const ids = Array.from({ length: 5000 }, (_, i) => 1_000_000 + ((i * 7919) % 8_999_999));
    const text = `${ids.map((v) => `${v}, `).join('')}]`;
    const r = run();
    readIdRun(kernel, enc.encode(text), r, doubledUint32);
    expect(Array.from(r.ids.subarray(0, r.count))).toEqual(ids);
    expect(text.slice(r.next)).toBe(']');
  });
});

// bound to a shared memory (the scan thread's ring), views of it are read where they lie and anything else is copied
// in, with the same ids; the kernel of its own beside it is left as it was
describe('readIdRun over a shared memory', () => {
  it('reads views of the memory in place, up to their last byte, and other chunks as before', () => {
    const ringBytes = 1024 * 1024;
    const memory = sharedWasmMemory(ringBytes + ID_RUN_KERNEL_BYTES)!;
    expect(bindIdRunKernel(memory, ringBytes + 4)).toBeNull(); // its own bytes must be 8-aligned
    expect(bindIdRunKernel(memory, ringBytes + 8)).toBeNull(); // and fit
    const bound = bindIdRunKernel(memory, ringBytes);
    expect(bound).not.toBeNull();
    const ids = Array.from({ length: 40_000 }, (_, i) => (i * 48271) % 152_064);
    const text = new TextEncoder().encode(`${ids.map((v, i) => `${v}${i % 5 === 0 ? ', ' : ','}`).join('')}9]`);
    const ring = new Uint8Array(memory.buffer, 0, ringBytes);
    // a view that ends where the kernel's own bytes begin: its last ids are read without reading past it
    const view = ring.subarray(ringBytes - text.length, ringBytes);
    view.set(text);
    for (const chunk of [view, Uint8Array.from(text)]) {
      const r = run();
      readIdRun(bound, chunk, r, doubledUint32);
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
