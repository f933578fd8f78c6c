// The newest router's content-affinity pin through the live orchestrator: the key is taken from the chat body as it
// arrives (first two message contents, first 256 prompt_token_ids), completions requests never pin, and the
// 2026-06 router has no pin. Prompts shorter than one block (128) match nothing, so without a pin every decision is a
// round-robin tie and alternates between the two servers.
import { afterEach, describe, expect, it } from 'vitest';
import { startLiveCluster, type LiveCluster } from '../../src/sim/live/index.js';
import { get, post, smallConfig } from './live-helpers.js';

let cluster: LiveCluster | null = null;
afterEach(async () => {
  await cluster?.stop();
  cluster = null;
});

interface DebugDoc {
  servers: { active_requests: number }[];
  decisions: { chosen: string; candidates: { server: string; score: number }[] | null }[];
}

const turn = (extra: readonly { role: string; content: string }[] = []): string =>
  JSON.stringify({
    model: 'm',
    messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hello' }, ...extra],
    max_tokens: 2,
  });

/** round-robin over two servers: a, b, a */
function alternates(decisions: DebugDoc['decisions']): void {
  const [a, b, c] = decisions.map((d) => d.chosen);
  expect(a).not.toBe(b);
  expect(c).toBe(a);
}

async function chosen(
  profile: string,
  bodies: readonly { path: string; body: string }[],
): Promise<DebugDoc['decisions']> {
  cluster = await startLiveCluster(smallConfig('healthy', [`router.profile=${profile}`]));
  const debug = async (): Promise<DebugDoc> => JSON.parse((await get(cluster!.debugUrl)).text) as DebugDoc;
  for (const b of bodies) {
    expect((await post(`${cluster.orchestratorUrl}${b.path}`, b.body)).status).toBe(200);
    // finish_request (after its poll) may land after the response: wait for it so the next scores tie on load too
    const deadline = Date.now() + 5_000;
    while ((await debug()).servers.some((s) => s.active_requests !== 0)) {
      if (Date.now() > deadline) throw new Error('timed out waiting for finish_request');
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  return (await debug()).decisions;
}

const conversation = [
  { path: '/v1/chat/completions', body: turn() },
  {
    path: '/v1/chat/completions',
    body: turn([
      { role: 'assistant', content: 'hi' },
      { role: 'user', content: 'more' },
    ]),
  },
  {
    path: '/v1/chat/completions',
    body: turn([
      { role: 'assistant', content: 'hi' },
      { role: 'user', content: 'more' },
      { role: 'assistant', content: 'ok' },
    ]),
  },
];

describe('the newest router’s conversation pin on the live orchestrator', () => {
  it('keeps every turn of a chat conversation on its first server, where the tied scores would alternate', async () => {
    const decisions = await chosen('newest', conversation);
    expect(decisions).toHaveLength(3);
    // all scores tie (no full block): only the pin keeps the later turns in place
    for (const d of decisions) expect(new Set(d.candidates!.map((c) => c.score)).size).toBe(1);
    expect(new Set(decisions.map((d) => d.chosen)).size).toBe(1);
  });

  it('does not pin on the 2026-06 router, nor completions requests on the newest one', async () => {
    const old = await chosen('2026-06', conversation);
    expect(old).toHaveLength(3);
    alternates(old);
    await cluster?.stop();
    // distinct prompts (no shared partial block), the same stray `messages` field: a CompletionRequest has none
    const completion = (first: number): { path: string; body: string } => ({
      path: '/v1/completions',
      body: JSON.stringify({
        model: 'm',
        prompt: [first, first + 1, first + 2],
        messages: [{ role: 'user', content: 'hello' }],
        max_tokens: 2,
      }),
    });
    const newest = await chosen('newest', [completion(1), completion(10), completion(20)]);
    expect(newest).toHaveLength(3);
    for (const d of newest) expect(new Set(d.candidates!.map((c) => c.score)).size).toBe(1);
    alternates(newest);
  });
});
