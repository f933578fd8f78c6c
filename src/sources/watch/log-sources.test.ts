import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createServerResolver } from '../../core/watch/server-resolver.js';
import type { Observation } from '../../core/observe/observation.js';
import { silentLogger } from '../ports.js';
import { SourceStatusBoard } from '../source-status.js';
import { createOrchestratorLogSource, QUIET_LOG_LINES } from './log-sources.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function follow(lines: readonly string[]): Promise<{ status: SourceStatusBoard; seen: Observation[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'kvs-orch-log-'));
  const path = join(dir, 'orchestrator.log');
  await writeFile(path, lines.map((l) => `${l}\n`).join(''));
  const seen: Observation[] = [];
  const sink = { apply: (o: Observation): void => void seen.push(o) };
  const status = new SourceStatusBoard({ sink, clock: () => 0 });
  const source = createOrchestratorLogSource(
    { sink, status, clock: () => 0, logger: silentLogger, resolve: createServerResolver({}) },
    { path, intervalMs: 20 },
  );
  cleanups.push(async () => {
    await source.stop();
    await rm(dir, { recursive: true, force: true });
  });
  await source.start();
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline && status.list().find((s) => s.source === 'orchestrator-log')?.seen !== true)
    await new Promise((r) => setTimeout(r, 20));
  return { status, seen };
}

describe('orchestrator log source', () => {
  it("says so when the log carries none of the router INFO lines (TensorRT-LLM's newest logger logs at error by default)", async () => {
    const quiet = Array.from(
      { length: QUIET_LOG_LINES + 5 },
      (_, i) => `[12/01/2026-10:00:${String(i).padStart(2, '0')}] [TRT-LLM] [W] something unrelated ${i}`,
    );
    const { status } = await follow(['[TRT-LLM] [I] server is ready with info: {}', ...quiet]);
    const note = status.list().find((s) => s.source === 'orchestrator-log')?.note ?? '';
    expect(note).toContain('TLLM_LOG_LEVEL=info');
    expect(note).toContain('TLLM_LOG_LEVEL_BY_MODULE="info:serve"');
    expect(note).toContain('names no server');
  });

  it('says nothing when the router INFO lines are there', async () => {
    const lines = [
      '[TRT-LLM] [I] BlockHashMixin: tokens_per_block=32 (auto, adopts worker), custom_tokenizer=None',
      ...Array.from({ length: QUIET_LOG_LINES + 5 }, (_, i) => `[TRT-LLM] [W] other ${i}`),
    ];
    const { status, seen } = await follow(lines);
    expect(status.list().find((s) => s.source === 'orchestrator-log')?.note ?? null).toBeNull();
    expect(seen.some((o) => o.kind === 'router-config' && o.profile === 'newest')).toBe(true);
  });
});
