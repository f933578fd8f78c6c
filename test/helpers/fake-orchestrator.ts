// A tiny stand-in for the disaggregated orchestrator with kv_cache_aware routing: send each CTX request to a relay
// port, then poll that port's /kv_cache_events right after (poll on finish), keeping every item as raw text.
import { request } from 'undici';
import { splitJsonArray } from '../../src/core/relay/split-json-array.js';

export interface OrchestratorRun {
  /** raw event items received per relay base URL, in order */
  readonly received: Map<string, string[]>;
  readonly statuses: number[];
}

export async function pollEvents(base: string, consumer?: string): Promise<string[]> {
  const res = await request(`${base}/kv_cache_events`, {
    method: 'POST',
    ...(consumer !== undefined ? { headers: { 'x-kvsentinel-consumer': consumer } } : {}),
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`poll ${base}: HTTP ${res.statusCode} ${text}`);
  const split = splitJsonArray(text);
  if (!split.ok) throw new Error(`poll ${base}: ${split.issue.message}`);
  return split.items;
}

export async function runFakeOrchestrator(
  bases: readonly string[],
  requests: number,
  options: { consumer?: string; stream?: boolean } = {},
): Promise<OrchestratorRun> {
  const received = new Map<string, string[]>(bases.map((b) => [b, []]));
  const statuses: number[] = [];
  for (let i = 0; i < requests; i++) {
    const base = bases[i % bases.length] as string;
    const res = await request(`${base}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-correlation-id': `traj-${i % 3}` },
      // a 64-bit disagg_request_id above 2^53, as text: JSON.stringify of a number would round it
      body: `{"model":"m","prompt":[${1000 + i},2,3,4,5],"max_tokens":1,"stream":${options.stream === true},"disaggregated_params":{"request_type":"context_only","disagg_request_id":${18_446_744_073_709_551_000n + BigInt(i)}}}`,
    });
    await res.body.text();
    statuses.push(res.statusCode);
    received.get(base)?.push(...(await pollEvents(base, options.consumer)));
  }
  return { received, statuses };
}
