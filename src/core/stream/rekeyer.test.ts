// The re-keyer's copy counts: one count per level packed in one number, each level's count independent of the others,
// up to 255 copies (then held there), and the highest level (3) as exact as the lowest.
import { describe, expect, it } from 'vitest';
import { StreamRekeyer, type StoredInput } from './rekeyer.js';

const store = (hash: bigint, level: number): StoredInput => ({
  parent: null,
  hashes: [hash],
  blocks: [Uint32Array.of(1, 2, 3, 4)],
  loraId: null,
  scopes: [null],
  level,
});

describe('StreamRekeyer copy counts', () => {
  it('counts copies per level independently, level 3 included, and forgets a hash with its last copy', () => {
    const r = new StreamRekeyer();
    const key = r.stored(0, store(7n, 0)).keys[0];
    for (let i = 0; i < 3; i++) r.stored(0, store(7n, 3));
    r.stored(0, store(7n, 1));
    // a removal at a level with no copy matches nothing and leaves the others alone
    expect(r.removed(0, 7n, 2)).toBeNull();
    for (let i = 0; i < 3; i++) expect(r.removed(0, 7n, 3)).toBe(key);
    expect(r.removed(0, 7n, 3)).toBeNull();
    expect(r.removed(0, 7n, 1)).toBe(key);
    expect(r.size(0)).toBe(1);
    expect(r.removed(0, 7n, 0)).toBe(key);
    expect(r.size(0)).toBe(0);
  });

  it('holds a level at 255 copies without touching the next level', () => {
    const r = new StreamRekeyer();
    for (let i = 0; i < 300; i++) r.stored(0, store(9n, 2));
    r.stored(0, store(9n, 3));
    for (let i = 0; i < 255; i++) expect(r.removed(0, 9n, 2)).not.toBeNull();
    expect(r.removed(0, 9n, 2)).toBeNull();
    expect(r.removed(0, 9n, 3)).not.toBeNull();
    expect(r.size(0)).toBe(0);
  });

  it("clearing a level keeps the copies at the others, and a cap's drop reports every level's count", () => {
    const r = new StreamRekeyer(1);
    r.stored(0, store(5n, 0));
    r.stored(0, store(5n, 3));
    r.stored(0, store(5n, 3));
    r.clearLevel(0, 0);
    expect(r.size(0)).toBe(1);
    expect(r.removed(0, 5n, 0)).toBeNull();
    const dropped = r.stored(0, store(6n, 1)).dropped;
    expect(dropped.map((d) => d.copies)).toEqual([[0, 0, 0, 2]]);
  });
});
