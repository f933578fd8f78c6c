// The id-run kernel against the plain scanner. The scanner's property tests (ctx-request-scanner.test.ts) draw short
// arrays, and the kernel only takes runs of 32 bytes and more (two streams past 1 KiB, a new slice every 64 KiB), so
// they almost never reach it. Here every input is built to: long runs of `id,` and `id, ` with ids of every width,
// odd separators and ids placed anywhere (also at the two-stream split and at chunk ends), cut into chunks anywhere,
// read three ways: by the scanner with no kernel (its byte-by-byte loop, the fallback where WebAssembly is not
// available), with a kernel of its own (chunks copied in), and with a kernel bound to a shared ring whose views it
// reads in place (the scan thread's form). All three must answer the same, and the same as parseCtxRequest.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sharedWasmMemory } from '../wasm/wasm-binary.js';
import { parseCtxRequest, type CtxRequestInfo } from './ctx-request.js';
import { CtxRequestScanner, CtxScanScratch } from './ctx-request-scanner.js';
import {
  bindIdRunKernel,
  createIdRunKernel,
  ID_RUN_KERNEL_BYTES,
  readIdRun,
  type IdRun,
  type IdRunKernel,
} from './id-run-kernel.js';

const enc = new TextEncoder();

/** what a kernel read: calls, calls in two streams, ids */
interface Reach {
  calls: number;
  twoStream: number;
  ids: number;
}

/** `k` with its calls counted (the counts go to `reach`) */
function counted(k: IdRunKernel, reach: Reach): IdRunKernel {
  const read = (stop: number): number => {
    reach.ids += (k.outEnd.value - k.outAt) >> 2;
    return stop;
  };
  return {
    ...k,
    ids: (i, end, out) => {
      reach.calls++;
      return read(k.ids(i, end, out));
    },
    ids2: (i, split, end, out) => {
      reach.calls++;
      reach.twoStream++;
      return read(k.ids2(i, split, end, out));
    },
  };
}

const RING_BYTES = 1024 * 1024;
const memory = sharedWasmMemory(RING_BYTES + ID_RUN_KERNEL_BYTES)!;
const ring = new Uint8Array(memory.buffer, 0, RING_BYTES);
const ownReach: Reach = { calls: 0, twoStream: 0, ids: 0 };
const ringReach: Reach = { calls: 0, twoStream: 0, ids: 0 };
const own = counted(createIdRunKernel()!, ownReach);
const bound = counted(bindIdRunKernel(memory, RING_BYTES)!, ringReach);

/** `bytes` cut at `cuts` (sorted, within the body) */
function pieces(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const cut of at) {
    out.push(bytes.subarray(from, cut));
    from = cut;
  }
  out.push(bytes.subarray(from));
  return out;
}

function scanned(chunks: readonly Uint8Array[], kernel: IdRunKernel | null): CtxRequestInfo | null {
  const scanner = new CtxRequestScanner(new CtxScanScratch(kernel));
  for (const c of chunks) scanner.feed(c);
  return scanner.finish({});
}

/**
 * The body in the ring, as the scan thread feeds it: from `offset` on, wrapping at the ring's end (each piece a view,
 * the one before the wrap ending where the kernel's own bytes begin), each piece cut at `cuts`.
 */
function ringPieces(bytes: Uint8Array, offset: number, cuts: readonly number[]): Uint8Array[] {
  const at = offset % RING_BYTES;
  const first = Math.min(bytes.length, RING_BYTES - at);
  ring.set(bytes.subarray(0, first), at);
  ring.set(bytes.subarray(first), 0);
  const views = [ring.subarray(at, at + first), ring.subarray(0, bytes.length - first)];
  return views.flatMap((v) => pieces(v, cuts));
}

const plain = (info: CtxRequestInfo | null): unknown =>
  info === null ? null : { ...info, promptTokens: info.promptTokens === null ? null : [...info.promptTokens] };

const digits = (width: number): fc.Arbitrary<string> =>
  width === 1
    ? fc.integer({ min: 0, max: 9 }).map(String)
    : fc.integer({ min: 10 ** (width - 1), max: 10 ** width - 1 }).map(String);
/** ids as text: mostly the kernel's (1 to 7 digits), some it leaves to the scanner (8 to 10 digits, below 2^32) */
const idText = fc.oneof(
  { arbitrary: fc.integer({ min: 1, max: 7 }).chain(digits), weight: 60 },
  { arbitrary: digits(8), weight: 2 },
  { arbitrary: fc.oneof(digits(9), fc.integer({ min: 1_000_000_000, max: 0xffff_ffff }).map(String)), weight: 1 },
);
/** mostly what JSON.stringify and json.dumps write; some JSON whitespace the kernel leaves to the scanner */
const separator = fc.oneof(
  { arbitrary: fc.constantFrom(',', ', '), weight: 60 },
  { arbitrary: fc.constantFrom(' ,', ',  ', ',\n', '\t,', ',\t', ', \n ', '\r\n,'), weight: 1 },
);
/** what a few bodies have somewhere: ids read as 7 (leading zeros), past 32 bits, no ids, no JSON separators */
const oddity = fc.constantFrom(
  '007,',
  '0000000,',
  '00000001, ',
  '4294967296,',
  '99999999999,',
  '-1,',
  '1.5,',
  '1e3,',
  '"7",',
  '1,,',
  '1 2,',
  '1,é',
  '1é,',
  '1,\u0000',
);
/** where: anywhere, or close to the middle (where ids2 splits a long run in two) */
const place = fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0.48, max: 0.52, noNaN: true }));
const runLength = fc.oneof(
  fc.integer({ min: 1, max: 40 }),
  // past 1 KiB: two streams
  fc.integer({ min: 150, max: 700 }),
  fc.integer({ min: 700, max: 3000 }),
);

/** a body whose prompt is one long run of ids (with an oddity or two in some); `seed` places it in the ring */
const body = fc
  .record({
    n: runLength,
    odd: fc.oneof({ arbitrary: fc.constant([]), weight: 2 }, fc.array(fc.tuple(oddity, place), { maxLength: 2 })),
    lead: fc.constantFrom('', ' ', '\n  '),
    end: fc.oneof({ arbitrary: fc.constant(']'), weight: 6 }, fc.constantFrom(' ]', ',]', '', ']]')),
    key: fc.constantFrom('prompt', 'prompt_token_ids'),
    seed: fc.nat(),
  })
  .chain(({ n, odd, lead, end, key, seed }) =>
    fc.array(fc.tuple(idText, separator), { minLength: n, maxLength: n }).map((ids) => {
      const items = ids.map(([v, s]) => `${v}${s}`);
      for (const [what, at] of odd) items.splice(Math.floor(at * items.length), 0, what);
      // the last id without its separator
      const last = ids.at(-1)!;
      items[items.lastIndexOf(`${last[0]}${last[1]}`)] = last[0];
      const array = `[${lead}${items.join('')}${end}`;
      return { text: `{"model":"m","${key}":${array},"stream":true}`, seed };
    }),
  );

describe('the id-run kernel against the plain scanner', () => {
  it('reads long runs of every width and separator exactly as the byte-by-byte loop and parseCtxRequest do', () => {
    let read = 0;
    let ids = 0;
    /** ids of readable prompts the kernel read, by form */
    const byKernel = [0, 0];
    fc.assert(
      fc.property(body, fc.array(fc.nat(), { maxLength: 6 }), fc.nat({ max: 40 }), ({ text, seed }, cuts, tail) => {
        const bytes = enc.encode(text);
        // a cut among the body's last bytes too: the kernel's lookahead and its 32-byte minimum meet the chunk's end
        const at = [...cuts, Math.max(0, bytes.length - tail)];
        const expected = scanned(pieces(bytes, at), null);
        const before = [ownReach.ids, ringReach.ids];
        expect(plain(scanned(pieces(bytes, at), own))).toEqual(plain(expected));
        // the ring's wrap falls anywhere in the body, or nowhere
        expect(plain(scanned(ringPieces(bytes, seed, at), bound))).toEqual(plain(expected));
        if (expected !== null) expect(plain(expected)).toEqual(plain(parseCtxRequest(text, {})));
        if (expected?.promptTokens != null) {
          read++;
          ids += expected.promptTokens.length;
          byKernel[0]! += ownReach.ids - before[0]!;
          byKernel[1]! += ringReach.ids - before[1]!;
        }
      }),
      { numRuns: 400 },
    );
    // the comparison covered the kernel, in both of its forms and both of its functions, for most ids
    expect(read).toBeGreaterThan(100);
    for (const reach of [ownReach, ringReach]) {
      expect(reach.twoStream).toBeGreaterThan(50);
      expect(reach.calls - reach.twoStream).toBeGreaterThan(50);
    }
    expect(byKernel[0]).toBeGreaterThan(ids * 0.8);
    expect(byKernel[1]).toBeGreaterThan(ids * 0.8);
  });

  it('agrees on runs past the kernel slice (64 KiB) with odd ids at the slice edge, wherever chunks are cut', () => {
    const base = Array.from({ length: 12_000 }, (_, i) => String((i * 7919) % 9_999_999));
    const bodies = [
      `{"prompt":[${base.join(',')}]}`,
      `{"prompt":[${base.join(', ')}]}`,
      // an 8-digit id, then whitespace the kernel leaves, about where the first slice ends
      `{"prompt":[${[...base.slice(0, 8000), '12345678', ...base.slice(8000)].join(',')}]}`,
      `{"prompt":[${base.slice(0, 9000).join(', ')},\n${base.slice(9000).join(', ')}]}`,
    ];
    for (const text of bodies) {
      const bytes = enc.encode(text);
      for (const cuts of [[], [65_536], [65_530, 65_541], [1, 30_000, 65_535, 100_000], [bytes.length - 9]]) {
        const expected = plain(parseCtxRequest(text, {}));
        expect((expected as { promptTokens: number[] }).promptTokens).toHaveLength(
          text.includes('12345678') ? 12_001 : 12_000,
        );
        expect(plain(scanned(pieces(bytes, cuts), null))).toEqual(expected);
        expect(plain(scanned(pieces(bytes, cuts), own))).toEqual(expected);
        expect(plain(scanned(ringPieces(bytes, RING_BYTES - 70_001, cuts), bound))).toEqual(expected);
      }
    }
  });
});

/**
 * The kernel's grammar, from byte `at`: ids of 1 to 7 digits, each followed by ',' and at most one space, until
 * anything else. The ids, and where each one's separator ends.
 */
function kernelGrammar(bytes: Uint8Array, at: number): { ids: number[]; ends: number[] } {
  const ids: number[] = [];
  const ends: number[] = [];
  for (;;) {
    let d = 0;
    while (at + d < bytes.length && bytes[at + d]! >= 48 && bytes[at + d]! <= 57) d++;
    if (d < 1 || d > 7 || bytes[at + d] !== 44) return { ids, ends };
    ids.push(Number(new TextDecoder().decode(bytes.subarray(at, at + d))));
    at += d + 1;
    if (bytes[at] === 32) at++;
    ends.push(at);
  }
}

describe('readIdRun against its grammar', () => {
  it('reads a prefix of the ids the grammar reads, stops where one ends, and leaves the scanner at most 31 bytes', () => {
    const before = fc.constantFrom('', '[', '"prompt":[', 'x'.repeat(100));
    const run = fc.array(fc.tuple(idText, separator), { minLength: 0, maxLength: 2000 });
    const after = fc.constantFrom('', ']', '1', '12', '123456789', ' ]', '"');
    fc.assert(
      fc.property(before, run, after, fc.boolean(), (head, ids, tail, inRing) => {
        const text = enc.encode(`${head}${ids.map(([v, s]) => `${v}${s}`).join('')}${tail}`);
        // in the ring: the run ends where the kernel's own bytes begin (the lookahead must stop at the view's end)
        const chunk = inRing ? ring.subarray(RING_BYTES - text.length) : text;
        if (inRing) chunk.set(text);
        const state: IdRun = { ids: new Uint32Array(8), count: 0, next: head.length, loadedFrom: 0, loadedTo: -1 };
        readIdRun(inRing ? bound : own, chunk, state, (a) => {
          const grown = new Uint32Array(a.length * 2);
          grown.set(a);
          return grown;
        });
        const grammar = kernelGrammar(text, head.length);
        const count = state.count;
        expect([...state.ids.subarray(0, count)]).toEqual(grammar.ids.slice(0, count));
        expect(state.next).toBe(count === 0 ? head.length : grammar.ends[count - 1]);
        // every id that starts 32 bytes or more before the chunk's end was read, as far as the grammar goes
        const starts = [head.length, ...grammar.ends.slice(0, -1)];
        const reachable = starts.filter((s, k) => k < grammar.ids.length && s + 32 <= text.length).length;
        expect(count).toBeGreaterThanOrEqual(reachable);
      }),
      { numRuns: 400 },
    );
  });
});
