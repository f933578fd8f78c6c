// vLLM sha256_cbor block hashes against vectors made by the real Python cbor2 (test/vectors/vllm_block_hash.py,
// the command in its docstring), and against a fresh run of that script on random blocks: the CBOR bytes must be
// identical, not only the digests, so a wrong integer width, a text string for bytes or a missing null fails here.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { encode } from 'cbor2';
import { describe, expect, it } from 'vitest';
import { KvsentinelError } from '../../src/core/errors.js';
import {
  vllmBlockHash,
  vllmBlockHashInput,
  vllmIntBlockHash,
  vllmNoneHash,
  type VllmExtraKey,
} from '../../src/core/hashing/vllm-block-hash.js';
import { repoRoot } from '../helpers/paths.js';

type JsonExtra = string | number | { bytes: string } | JsonExtra[];
interface Case {
  name: string;
  seed: string | null;
  parent?: string | null;
  blocks: { tokens: number[]; extra?: JsonExtra[] | null }[];
}
interface Result {
  name: string;
  none_hash: string | null;
  blocks: { cbor: string; hash: string; int: string }[];
}

const VECTORS = join(repoRoot, 'test/vectors');
const cases = JSON.parse(readFileSync(join(VECTORS, 'vllm-block-hash-cases.json'), 'utf8')) as Case[];
const results = (JSON.parse(readFileSync(join(VECTORS, 'vllm-block-hash.json'), 'utf8')) as { cases: Result[] }).cases;

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const bytes = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h, 'hex'));

function extraOf(v: JsonExtra): VllmExtraKey {
  if (Array.isArray(v)) return v.map(extraOf);
  if (typeof v === 'object') return bytes(v.bytes);
  return v;
}

/** What kvsentinel computes for a case, in the script's result form. */
function compute(c: Case): Result {
  const none = c.seed === null ? null : vllmNoneHash(c.seed);
  let parent = c.parent !== undefined && c.parent !== null ? bytes(c.parent) : none;
  if (parent === null) throw new Error(`${c.name}: no root parent`);
  const blocks = c.blocks.map((b) => {
    const extra = b.extra === undefined || b.extra === null ? null : extraOf(b.extra);
    const input = vllmBlockHashInput(parent!, b.tokens, extra);
    const hash = vllmBlockHash(parent!, b.tokens, extra);
    parent = hash;
    return { cbor: hex(input), hash: hex(hash), int: vllmIntBlockHash(hash).toString() };
  });
  return { name: c.name, none_hash: none === null ? null : hex(none), blocks };
}

describe('vLLM sha256_cbor block hashes', () => {
  it('has a vector for every case', () => {
    expect(results.map((r) => r.name)).toEqual(cases.map((c) => c.name));
  });

  it.each(cases.map((c, i) => [c.name, c, results[i]!] as const))('%s', (_name, c, expected) => {
    expect(compute(c)).toEqual(expected);
  });

  it('NONE_HASH of PYTHONHASHSEED=0 is sha256 of the CBOR text "0"', () => {
    expect(hex(vllmNoneHash('0'))).toBe('4e1195df020de59e0d65a33a4279f1183e7ae4e5d980e309f8b55adff2e61c3e');
  });

  it('discriminates: the parent as text, the seed as an integer or a dropped None give other hashes', () => {
    const c = cases[0]!;
    const root = vllmNoneHash('0');
    const good = hex(vllmBlockHash(root, c.blocks[0]!.tokens));
    expect(good).toBe(results[0]!.blocks[0]!.hash);
    expect(hex(vllmBlockHash(root, c.blocks[0]!.tokens, []))).not.toBe(good); // () is not None
    expect(hex(vllmNoneHash('00'))).not.toBe(hex(root));
  });

  it('hashes bytes held in a Node Buffer (ZMQ frames, msgpack bin views) as the byte string they are', () => {
    const c = cases[5]!; // extra keys with prompt-embeds bytes
    const root = vllmNoneHash('0');
    const block = c.blocks[3]!;
    const extra = extraOf(block.extra!);
    const inBuffers = (extra as VllmExtraKey[]).map((k) => (k instanceof Uint8Array ? Buffer.from(k) : k));
    expect(hex(vllmBlockHash(Buffer.from(root), [1, 2, 3, 4], inBuffers))).toBe(
      hex(vllmBlockHash(root, [1, 2, 3, 4], extra)),
    );
    expect(hex(vllmBlockHash(Buffer.from(root), [5, 6]))).toBe(hex(vllmBlockHash(root, [5, 6])));
  });

  it('writes the block tuple as a generic canonical encoder does, at every integer width and length header', () => {
    const parent = vllmNoneHash('7');
    for (const length of [0, 1, 23, 24, 255, 256, 300]) {
      const tokens = Array.from({ length }, (_, i) => [0, 23, 24, 255, 256, 65_535, 65_536, 4_294_967_295][i % 8]!);
      for (const extra of [null, ['lora', ['mm', -30]], [Uint8Array.of(1, 2, 3)]] as const) {
        expect(hex(vllmBlockHashInput(parent, tokens, extra))).toBe(hex(encode([parent, tokens, extra])));
      }
    }
    expect(() => vllmBlockHashInput(parent, [2 ** 32], null)).toThrow(KvsentinelError);
  });

  it('keeps the low 8 bytes big-endian for VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES', () => {
    expect(vllmIntBlockHash(Uint8Array.from([...new Array<number>(24).fill(0xaa), 0x80, 0, 0, 0, 0, 0, 0, 1]))).toBe(
      (1n << 63n) + 1n,
    );
  });
});

describe('vLLM sha256_cbor parity with Python cbor2 on random blocks', () => {
  it('gives the CBOR bytes and digests the real cbor2 gives', () => {
    let state = 0x2545f491;
    const next = (): number => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return state >>> 0;
    };
    const widths = [24, 256, 65_536, 2 ** 32];
    const random: Case[] = Array.from({ length: 40 }, (_, i) => ({
      name: `random ${i}`,
      seed: String(next() % 100_000),
      blocks: Array.from({ length: 1 + (next() % 4) }, (_b, j) => ({
        tokens: Array.from(
          { length: [1, 16, 23, 24, 64][next() % 5]! },
          () => next() % widths[next() % widths.length]!,
        ),
        extra:
          j === 0 && next() % 3 === 0
            ? [`salt-${next()}`]
            : next() % 4 === 0
              ? ['lora', [`mm${next()}`, (next() % 40) - 20]]
              : null,
      })),
    }));
    const run = spawnSync('/usr/bin/python3', [join(VECTORS, 'vllm_block_hash.py')], {
      input: JSON.stringify(random),
      encoding: 'utf8',
    });
    if (run.error !== undefined)
      throw new Error(`/usr/bin/python3 not runnable (CI installs python3-cbor2): ${run.error.message}`);
    expect(run.stderr).toBe('');
    const expected = (JSON.parse(run.stdout) as { cases: Result[] }).cases;
    expect(random.map(compute)).toEqual(expected);
  });
});
