// The relay's slow paths are counted and said: under the test runner the pool's thread file (compiled .js) does not
// exist, so this pool scans inline, the relay's fallback when its scan thread cannot run.
import { describe, expect, it } from 'vitest';
import { SCAN_FALLBACK_REASONS } from '../../core/relay/scan-fallback.js';
import { CtxScanPool } from './ctx-scan-pool.js';
import { ScanFallbacks } from './scan-fallbacks.js';

const enc = new TextEncoder();

function recordingLogger() {
  const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  const at =
    (level: string) =>
    (message: string, fields?: Record<string, unknown>): void => {
      lines.push({ level, message, ...(fields !== undefined ? { fields } : {}) });
    };
  return { lines, logger: { info: at('info'), warn: at('warn'), error: at('error') } };
}

describe('ScanFallbacks', () => {
  it('counts every fallback by reason, and logs the first of each once (warnings for the machine, info for load)', () => {
    const { lines, logger } = recordingLogger();
    const f = new ScanFallbacks(logger, 'relay:ctx0');
    expect(Object.keys(f.counts())).toEqual([...SCAN_FALLBACK_REASONS]);
    expect(Object.values(f.counts()).every((n) => n === 0)).toBe(true);
    f.count('inline');
    f.count('inline');
    f.count('thread_stopped', 3);
    f.count('text_path');
    f.count('ids_transferred', 0);
    expect(f.counts()).toMatchObject({ inline: 2, thread_stopped: 3, text_path: 1, ids_transferred: 0 });
    expect(lines.map((l) => [l.level, l.fields?.['reason']])).toEqual([
      ['warn', 'inline'],
      ['warn', 'thread_stopped'],
      ['info', 'text_path'],
    ]);
    expect(lines[0]?.message).toBe(
      'relay:ctx0: CTX bodies are read on the relay event loop: the scan thread is not available (logged once)',
    );
    // a copy: the caller's counts do not move under it
    const before = f.counts();
    f.count('inline');
    expect(before.inline).toBe(2);
  });
});

describe('CtxScanPool without its thread (the sources under the test runner)', () => {
  it('counts each request and response read inline, and each body sent to the text path', async () => {
    const pool = new CtxScanPool({ thread: true });
    expect(pool.threaded).toBe(false);
    const read = async (body: string) => {
      const scan = pool.open('json');
      scan.feed(enc.encode(body));
      return scan.finish({});
    };
    expect([...((await read('{"prompt":[4,5,6]}'))?.info.promptTokens ?? [])]).toEqual([4, 5, 6]);
    // several prompts: the scanner hands the body to parseCtxRequest's text path
    expect(await read('{"prompt":[[4,5],[6]]}')).toBeNull();
    const response = await pool.response(enc.encode('{"usage":{"prompt_tokens":3}}'), {
      sse: false,
      complete: true,
      msgpack: false,
    });
    expect(response.promptTokens).toBe(3);
    expect(pool.fallbacks.counts()).toEqual({
      inline: 3,
      thread_stopped: 0,
      text_path: 1,
      body_copy: 0,
      ids_transferred: 0,
      // WebAssembly runs here: the inline scanner has its id kernel
      no_kernel: 0,
      kernel_copy: 0,
    });
    await pool.close();
  });
});
