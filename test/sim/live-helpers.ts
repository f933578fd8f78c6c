// Shared setup of the live simulator tests: a small, fast cluster configuration and raw HTTP helpers.
import { request } from 'undici';
import { presetConfig } from '../../src/sim/sim-config.js';
import type { SimConfig } from '../../src/sim/sim-config.js';

/** 2 servers × 2 ranks, short prompts, fast model timings: a workload finishes in a couple of seconds */
export function smallConfig(preset: 'healthy' | 'seed', extra: readonly string[] = []): SimConfig {
  return presetConfig(preset, [
    'ctx.servers=2',
    'ctx.attention_dp=2',
    'ctx.overhead=20ms',
    'ctx.prefill_tokens_per_s=200000',
    'ctx.restart_downtime=400ms',
    'ctx.stall_every=0',
    'gen.overhead=20ms',
    'gen.ms_per_token=0.5',
    'workload.trajectories=6',
    'workload.concurrency=3',
    'workload.system_prefix_tokens=1000',
    'workload.task_tokens_median=400',
    'workload.turns_min=3',
    'workload.turns_max=4',
    'workload.output_tokens_median=20',
    'workload.tool_tokens_median=100',
    'workload.tool_tokens_max=400',
    'workload.tool_latency=50ms',
    'workload.ramp=50ms',
    ...extra,
  ]);
}

export interface RawResponse {
  readonly status: number;
  readonly text: string;
  readonly contentType: string;
}

export async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  const res = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  return {
    status: res.statusCode,
    text: await res.body.text(),
    contentType: String(res.headers['content-type'] ?? ''),
  };
}

export async function get(url: string): Promise<RawResponse> {
  const res = await request(url);
  return {
    status: res.statusCode,
    text: await res.body.text(),
    contentType: String(res.headers['content-type'] ?? ''),
  };
}

/** deterministic pseudo-random token ids (a tiny LCG; content only needs to differ between prompts) */
export function tokens(count: number, seed: number): number[] {
  const out: number[] = [];
  let x = seed >>> 0;
  for (let i = 0; i < count; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out.push(100 + (x % 120_000));
  }
  return out;
}

export function contextOnlyBody(prompt: readonly number[], extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    model: 'm',
    prompt,
    max_tokens: 8,
    disaggregated_params: { request_type: 'context_only', disagg_request_id: 1 },
    ...extra,
  });
}

/** `data:` payloads of an SSE body */
export function sseEvents(text: string): string[] {
  return text
    .split('\n\n')
    .map((block) => block.trim())
    .filter((block) => block.startsWith('data: '))
    .map((block) => block.slice('data: '.length));
}
