// The scan thread as it runs in the product: the compiled pool in dist/ (npm test builds it before the tests), whose
// thread file exists. Under the test runner the sources scan inline; this checks the thread gives the same answers.
import { Buffer } from 'node:buffer';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { encode } from '@msgpack/msgpack';
import { describe, expect, it } from 'vitest';
import { parseCtxRequest, type CtxRequestInfo } from '../../src/core/relay/ctx-request.js';
import { promptFingerprints } from '../../src/core/state/incremental-keys.js';
import type * as PoolModule from '../../src/sources/relay/ctx-scan-pool.js';

const distPool = fileURLToPath(new URL('../../dist/sources/relay/ctx-scan-pool.js', import.meta.url));

async function loadPool(): Promise<typeof PoolModule> {
  if (!existsSync(distPool)) throw new Error(`${distPool} is missing: run npm run build (npm test does) first`);
  return (await import(pathToFileURL(distPool).href)) as typeof PoolModule;
}

function plain(info: CtxRequestInfo | null): unknown {
  return info === null ? null : { ...info, promptTokens: info.promptTokens === null ? null : [...info.promptTokens] };
}

const enc = new TextEncoder();
/** no slow path taken */
const NONE = {
  inline: 0,
  thread_stopped: 0,
  text_path: 0,
  body_copy: 0,
  ids_transferred: 0,
  no_kernel: 0,
  kernel_copy: 0,
};
/** the body ring of the tests that fill it (the product's is larger) */
const RING = 8 * 1024 * 1024;

const idsBody = (ids: number, seed: number): string =>
  JSON.stringify({
    model: 'm',
    prompt: Array.from({ length: ids }, (_, k) => (k * 7919 + seed) % 152_064),
    disaggregated_params: { disagg_request_id: `id-${seed}` },
  });

async function scanAll(pool: PoolModule.CtxScanPool, bodies: readonly string[]): Promise<(CtxRequestInfo | null)[]> {
  const scans = bodies.map((b) => {
    const scan = pool.open('json');
    const bytes = enc.encode(b);
    for (let off = 0; off < bytes.length; off += 65_536) scan.feed(bytes.subarray(off, off + 65_536));
    return scan;
  });
  return (await Promise.all(scans.map((s) => s.finish({})))).map((a) => a?.info ?? null);
}

describe('CtxScanPool on its worker thread', () => {
  it('answers each of many concurrent scans exactly as parseCtxRequest, with the ids handed back', async () => {
    const { CtxScanPool } = await loadPool();
    const pool = new CtxScanPool({ thread: true });
    expect(pool.threaded).toBe(true);
    try {
      const bodies = Array.from({ length: 40 }, (_, i) =>
        i % 10 === 9
          ? `{"prompt":[[${i}],[2]]}` // the text path: the thread answers null
          : JSON.stringify({
              model: 'm',
              prompt: Array.from({ length: 500 + i }, (_, k) => (k * 7919 + i) % 152_064),
              disaggregated_params: { disagg_request_id: 18446744073709551557n.toString() },
            }),
      );
      const scans = bodies.map(() => pool.open('json'));
      // interleave the chunks of all requests, as concurrent requests arrive
      const bytes = bodies.map((b) => enc.encode(b));
      for (let off = 0; bytes.some((b) => off < b.length); off += 777) {
        bytes.forEach((b, i) => {
          if (off < b.length) scans[i]?.feed(b.subarray(off, off + 777));
        });
      }
      // every other request is part of a trajectory (a correlation id)
      const headersOf = (i: number): Record<string, string> => (i % 2 === 0 ? { 'x-correlation-id': `c${i}` } : {});
      const answers = await Promise.all(scans.map((s, i) => s.finish(headersOf(i))));
      answers.forEach((answer, i) => {
        const body = bodies[i] as string;
        if (i % 10 === 9) expect(answer).toBeNull();
        else {
          const expected = parseCtxRequest(body, headersOf(i));
          expect(plain(answer?.info ?? null)).toEqual(plain(expected));
          // the decision digest's fingerprints, computed on the thread exactly as the state would, for a trajectory's
          // turn only (nothing compares an uncorrelated prompt with another)
          if (i % 2 === 0) expect(answer?.promptFingerprints).toEqual(promptFingerprints(expected.promptTokens!));
          else expect(answer?.promptFingerprints).toBeNull();
        }
      });
      expect(answers[0]?.info.promptTokens).toBeInstanceOf(Uint32Array);
      expect(answers[0]?.promptFingerprints).toBeInstanceOf(Uint32Array);
      // the fast path all along (the kernel reads the ring in place), but for the 4 bodies of several prompts
      expect(pool.fallbacks.counts()).toEqual({ ...NONE, text_path: 4 });
    } finally {
      await pool.close();
    }
  });

  it('scans inline once closed (a stopped thread never loses a decision)', async () => {
    const { CtxScanPool } = await loadPool();
    const pool = new CtxScanPool({ thread: true });
    const pending = pool.open('json');
    pending.feed(enc.encode('{"prompt":[1,2'));
    await pool.close();
    await expect(pending.finish({})).rejects.toThrow('scan thread stopped');
    expect(pool.threaded).toBe(false);
    const scan = pool.open('json');
    scan.feed(enc.encode('{"prompt":[4,5]}'));
    expect([...((await scan.finish({}))?.info.promptTokens ?? [])]).toEqual([4, 5]);
    // a pool closed on purpose owes nothing: only what it reads inline afterwards is a fallback
    expect(pool.fallbacks.counts()).toEqual({ ...NONE, inline: 1 });
  });

  it('counts the scans a thread that died owed, read again on the event loop, and then each inline one', async () => {
    const { CtxScanPool } = await loadPool();
    const pool = new CtxScanPool({ thread: true });
    try {
      const ok = pool.open('json');
      ok.feed(enc.encode('{"prompt":[1,2,3]}'));
      expect([...((await ok.finish({}))?.info.promptTokens ?? [])]).toEqual([1, 2, 3]);
      // an exception on the thread, as a bug there would throw: no reader exists for this encoding, so the thread's
      // feed throws and the thread dies with this scan and the two after it in the same message unanswered
      const doomed = ['{"prompt":[7]}', '{"prompt":[8]}', '{"prompt":[9]}'].map((body, i) => {
        const scan = pool.open(i === 0 ? ('no-such-encoding' as 'json') : 'json');
        scan.feed(enc.encode(body));
        return scan.finish({});
      });
      for (const d of doomed) await expect(d).rejects.toThrow('scan thread stopped');
      expect(pool.threaded).toBe(false);
      const after = pool.open('json');
      after.feed(enc.encode('{"prompt":[4,5]}'));
      expect([...((await after.finish({}))?.info.promptTokens ?? [])]).toEqual([4, 5]);
      expect(pool.fallbacks.counts()).toEqual({ ...NONE, thread_stopped: 3, inline: 1 });
    } finally {
      await pool.close();
    }
  });

  it('under node --jitless (no WebAssembly) the thread reads every id byte by byte, counted per JSON body', () => {
    const script = `
      const { CtxScanPool } = await import(${JSON.stringify(pathToFileURL(distPool).href)});
      const pool = new CtxScanPool({ thread: true });
      const read = async (body) => {
        const scan = pool.open('json');
        scan.feed(new TextEncoder().encode(body));
        return scan.finish({});
      };
      const ids = Array.from({ length: 5000 }, (_, k) => (k * 7919) % 152064);
      const flat = await read(JSON.stringify({ prompt: ids }));
      const several = await read('{"prompt":[[1],[2]]}');
      const same = flat !== null && [...flat.info.promptTokens].every((v, k) => v === ids[k]);
      process.stdout.write(JSON.stringify({ wasm: typeof WebAssembly, threaded: pool.threaded, same, several, counts: pool.fallbacks.counts() }));
      await pool.close();
    `;
    // a file of its own: the thread inherits the process's options, and `-e` among them would run the script again
    const dir = mkdtempSync(join(tmpdir(), 'kvs-jitless-'));
    const file = join(dir, 'scan.mjs');
    writeFileSync(file, script);
    const child = spawnSync(process.execPath, ['--jitless', file], { encoding: 'utf8', timeout: 60_000 });
    rmSync(dir, { recursive: true, force: true });
    // V8 says it turned WebAssembly off; nothing else
    expect(child.stderr.trim()).toBe('Warning: disabling flag --expose_wasm due to conflicting flags');
    expect(JSON.parse(child.stdout)).toEqual({
      wasm: 'undefined',
      threaded: true,
      same: true,
      several: null,
      counts: { ...NONE, no_kernel: 2, text_path: 1 },
    });
  });

  it('decodes msgpack bodies and parses CTX responses on the thread, ids transferred back', async () => {
    const { CtxScanPool } = await loadPool();
    const pool = new CtxScanPool({ thread: true });
    try {
      const body = encode(
        {
          prompt: [7, 8, 9],
          disaggregated_params: {
            request_type: 'context_only',
            disagg_request_id: 18446744073709551557n,
            conversation_id: 'c',
          },
        },
        { useBigInt64: true },
      );
      const scan = pool.open('msgpack');
      scan.feed(body.subarray(0, 5));
      scan.feed(body.subarray(5));
      const info = (await scan.finish({}))?.info;
      expect(info).toMatchObject({
        disaggRequestId: '18446744073709551557',
        correlationId: 'c',
        promptForm: 'token-ids',
        unreadable: null,
      });
      expect(info?.promptTokens).toBeInstanceOf(Uint32Array);
      expect([...(info?.promptTokens ?? [])]).toEqual([7, 8, 9]);
      const response = enc.encode(
        JSON.stringify({
          usage: { prompt_tokens: 3, prompt_tokens_details: { cached_tokens: 1 } },
          prompt_token_ids: [7, 8, 9],
        }),
      );
      const parsed = await pool.response(response, { sse: false, complete: true, msgpack: false });
      expect(parsed).toMatchObject({ promptTokens: 3, cachedTokens: 1, workerPromptTokenForm: 'list' });
      expect(parsed.workerPromptTokens).toBeInstanceOf(Uint32Array);
      expect([...(parsed.workerPromptTokens ?? [])]).toEqual([7, 8, 9]);
      // the worker's ids come as a view of the id ring too
      expect(parsed.workerPromptTokens?.buffer).toBeInstanceOf(SharedArrayBuffer);
      // a small Buffer is a view of Node's shared pool: parsed from a copy, the pool left as it was
      const pooled = Buffer.from(JSON.stringify({ usage: { prompt_tokens: 5 } }));
      expect(pooled.buffer.byteLength).toBeGreaterThan(pooled.length);
      const neighbour = Buffer.from('still here');
      expect(await pool.response(pooled, { sse: false, complete: true, msgpack: false })).toMatchObject({
        promptTokens: 5,
      });
      expect(neighbour.toString()).toBe('still here');
      expect(pooled.buffer.byteLength).toBeGreaterThan(0);
    } finally {
      await pool.close();
    }
  });

  it('reads through its shared ring as it wraps around, bodies past a full ring waiting for room, every answer exact', async () => {
    const { CtxScanPool } = await loadPool();
    const pool = new CtxScanPool({ thread: true });
    try {
      // 2 rounds of 48 bodies of ~200 KB, each round fed in one tick: ~9.6 MB, more than the ring's 8 MB, so the ring
      // fills (the rest waits for the thread to read), wraps in the second round, and chunks straddle its end
      for (let round = 0; round < 2; round++) {
        const bodies = Array.from({ length: 48 }, (_, i) =>
          JSON.stringify({
            model: 'm',
            prompt: Array.from({ length: 32_000 + i * 13 + round }, (_, k) => (k * 7919 + i + round) % 152_064),
            disaggregated_params: { disagg_request_id: `r${round}-${i}` },
          }),
        );
        const scans = bodies.map(() => pool.open('json'));
        const bytes = bodies.map((b) => enc.encode(b));
        for (let off = 0; bytes.some((b) => off < b.length); off += 65_536) {
          bytes.forEach((b, i) => {
            if (off < b.length) scans[i]?.feed(b.subarray(off, off + 65_536));
          });
        }
        const answers = await Promise.all(scans.map((s) => s.finish({})));
        answers.forEach((answer, i) =>
          expect(plain(answer?.info ?? null)).toEqual(plain(parseCtxRequest(bodies[i] as string, {}))),
        );
      }
    } finally {
      await pool.close();
    }
  });

  it('keeps at most one ring of bodies waiting for room: past it the oldest go in copies, every answer exact', async () => {
    const { CtxScanPool } = await loadPool();
    const pool = new CtxScanPool({ thread: true, ringBytes: RING });
    try {
      // 100 bodies of ~200 KB ended in one tick (~20 MB): the ring takes 8 MB, no answer can free room within the tick,
      // so without a bound 12 MB would wait (and at saturation, bodies and their exchanges without end)
      const bodies = Array.from({ length: 100 }, (_, i) =>
        JSON.stringify({
          model: 'm',
          prompt: Array.from({ length: 32_000 + i * 11 }, (_, k) => (k * 104_729 + i) % 152_064),
          disaggregated_params: { disagg_request_id: `b-${i}` },
        }),
      );
      const scans = bodies.map((b) => {
        const scan = pool.open('json');
        scan.feed(enc.encode(b));
        return scan;
      });
      const answers = Promise.all(scans.map((s) => s.finish({})));
      expect(pool.parkedBytes).toBeGreaterThan(0);
      expect(pool.parkedBytes).toBeLessThanOrEqual(RING);
      (await answers).forEach((answer, i) =>
        expect(plain(answer?.info ?? null)).toEqual(plain(parseCtxRequest(bodies[i] as string, {}))),
      );
      expect(pool.parkedBytes).toBe(0);
      // the ones past a ring's worth of waiting went in copies of their own: ~4 MB of the 20, ~20 bodies
      expect(pool.fallbacks.counts().body_copy).toBeGreaterThanOrEqual(10);
      expect(pool.fallbacks.counts().body_copy).toBeLessThanOrEqual(30);
      expect(pool.fallbacks.counts()).toEqual({ ...NONE, body_copy: pool.fallbacks.counts().body_copy });
    } finally {
      await pool.close();
    }
  });

  it('sends a body larger than the whole ring in a copy of its own, between bodies that wait for room', async () => {
    const { CtxScanPool } = await loadPool();
    const pool = new CtxScanPool({ thread: true, ringBytes: RING });
    try {
      const body = (ids: number, seed: number): string =>
        JSON.stringify({ prompt: Array.from({ length: ids }, (_, k) => (k * 7919 + seed) % 152_064) });
      // ~8.5 MB of small bodies fill the ring, then one of ~9 MB, then more small ones
      const bodies = [
        ...Array.from({ length: 40 }, (_, i) => body(30_000, i)),
        body(1_400_000, 99),
        ...Array.from({ length: 8 }, (_, i) => body(30_000, 100 + i)),
      ];
      expect(enc.encode(bodies[40]).length).toBeGreaterThan(RING);
      (await scanAll(pool, bodies)).forEach((info, i) =>
        expect(plain(info)).toEqual(plain(parseCtxRequest(bodies[i] as string, {}))),
      );
      // the one larger than the ring, and none of the others (they waited for room)
      expect(pool.fallbacks.counts()).toEqual({ ...NONE, body_copy: 1 });
    } finally {
      await pool.close();
    }
  });

  it('hands out prompt ids as views of its id ring, which wraps as V8 collects them, every id exact', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const { CtxScanPool } = await loadPool();
    // room for 3 prompts of ~30K ids: 8 rounds of 2 wrap the ring more than 4 times
    const pool = new CtxScanPool({ thread: true, idRingSlots: 100_000 });
    try {
      for (let round = 0; round < 8; round++) {
        const bodies = [idsBody(30_000 + round, 2 * round), idsBody(29_000 + round, 2 * round + 1)];
        const infos = await scanAll(pool, bodies);
        infos.forEach((info, i) => {
          expect(info?.promptTokens).toBeInstanceOf(Uint32Array);
          expect(info?.promptTokens?.buffer).toBeInstanceOf(SharedArrayBuffer);
          expect(plain(info)).toEqual(plain(parseCtxRequest(bodies[i]!, {})));
        });
        infos.length = 0;
        // the round's views are garbage now: once collected, their room is the thread's again
        for (let i = 0; i < 100 && pool.idDelivery.held > 0; i++) {
          gc();
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        expect(pool.idDelivery.held).toBe(0);
      }
      expect(pool.idDelivery).toEqual({ ring: 16, transferred: 0, held: 0 });
      expect(pool.fallbacks.counts()).toEqual(NONE);
    } finally {
      await pool.close();
    }
  });

  it('sends ids in buffers of their own while the event loop holds the id ring full, held views never overwritten', async () => {
    const { CtxScanPool } = await loadPool();
    const pool = new CtxScanPool({ thread: true, idRingSlots: 100_000 });
    try {
      const first = Array.from({ length: 5 }, (_, i) => idsBody(30_000 + i, 100 + i));
      const held = await scanAll(pool, first);
      // 3 prompts fit, the 4th and 5th travel on their own
      expect(pool.idDelivery).toMatchObject({ ring: 3, transferred: 2 });
      expect(held.filter((info) => info?.promptTokens?.buffer instanceof SharedArrayBuffer)).toHaveLength(3);
      // more prompts while the first ones are still held: none may land on them
      const second = Array.from({ length: 4 }, (_, i) => idsBody(31_000 + i, 200 + i));
      const later = await scanAll(pool, second);
      later.forEach((info, i) => expect(plain(info)).toEqual(plain(parseCtxRequest(second[i]!, {}))));
      held.forEach((info, i) => expect(plain(info)).toEqual(plain(parseCtxRequest(first[i]!, {}))));
      expect(pool.idDelivery.ring + pool.idDelivery.transferred).toBe(9);
      // a worker's prompt ids in a response, past a ring still held full: in a buffer of their own, exact
      const workerIds = Array.from({ length: 40_000 }, (_, k) => (k * 31 + 5) % 152_064);
      const response = enc.encode(JSON.stringify({ usage: { prompt_tokens: 40_000 }, prompt_token_ids: workerIds }));
      const parsed = await pool.response(response, { sse: false, complete: true, msgpack: false });
      expect(parsed.workerPromptTokens?.buffer).toBeInstanceOf(ArrayBuffer);
      expect([...(parsed.workerPromptTokens ?? [])]).toEqual(workerIds);
      // each prompt's ids that travelled on their own, the request's and the worker's, is a fallback
      expect(pool.fallbacks.counts()).toEqual({ ...NONE, ids_transferred: pool.idDelivery.transferred + 1 });
      // a thread that stops takes the ring with it: the views handed out keep their ids
      await pool.close();
      held.forEach((info, i) => expect(plain(info)).toEqual(plain(parseCtxRequest(first[i]!, {}))));
    } finally {
      await pool.close();
    }
  });
});
