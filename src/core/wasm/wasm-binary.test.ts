import { describe, expect, it } from 'vitest';
import { i32Const, i64Const, op, sleb, uleb, vec } from './wasm-binary.js';

describe('WebAssembly binary encoding', () => {
  it('writes LEB128 as the spec examples do', () => {
    expect(uleb(624485)).toEqual([0xe5, 0x8e, 0x26]);
    expect(uleb(0)).toEqual([0]);
    expect(sleb(-123456)).toEqual([0xc0, 0xbb, 0x78]);
    expect(sleb(63)).toEqual([0x3f]);
    expect(sleb(64)).toEqual([0xc0, 0x00]);
    expect(vec([[1], [2, 3]])).toEqual([2, 1, 2, 3]);
  });

  it('an i32 constant above 2^31 is its signed value (as i32.const requires); an i64 keeps 64 bits', () => {
    expect(i32Const(0x9e3779b9)).toEqual([op.i32Const, ...sleb(0x9e3779b9 | 0)]);
    expect(i32Const(0x9e3779b9)).toHaveLength(6);
    expect(i64Const(0x0101010101010101n)).toEqual([op.i64Const, ...sleb(0x0101010101010101n)]);
    expect(sleb(2n ** 63n)).toEqual(sleb(-(2n ** 63n)));
  });
});
