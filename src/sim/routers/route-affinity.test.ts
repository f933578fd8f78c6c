import { describe, expect, it } from 'vitest';
import { StaticPrompt } from '../prompt.js';
import { NewestKvCacheAwareRouter, type NewestKvRouterOptions } from './newest-kv-router.js';
import { contentAffinityKey, RouteAffinity } from './route-affinity.js';
import type { RouteRequest } from './router.js';

const OPTIONS: NewestKvRouterOptions = {
  tokensPerBlock: 4,
  maxBatchSize: 64,
  trackRoutedBlocks: true,
  loadWeight: 0.25,
  loadCap: Infinity,
  pollOnFinish: false,
};

function router(options: Partial<NewestKvRouterOptions> = {}): NewestKvCacheAwareRouter {
  return new NewestKvCacheAwareRouter(
    ['a', 'b'],
    { ...OPTIONS, ...options },
    { hashAlgo: () => 'v1_block_key', pollEvents: () => [], workerTokensPerBlock: () => null },
  );
}

const ids = (from: number, length: number): Uint32Array => Uint32Array.from({ length }, (_, i) => from + i);
let seq = 0;
const request = (tokens: Uint32Array, affinityKey: string | null): RouteRequest => ({
  requestId: `r${++seq}`,
  correlationId: null,
  prompt: new StaticPrompt(tokens),
  affinityKey,
});

const chat = (...contents: string[]): { role: string; content: string }[] =>
  contents.map((content, i) => ({ role: i === 0 ? 'system' : 'user', content }));

describe('contentAffinityKey (router.py _content_affinity_key)', () => {
  it('keys a chat request on its first two message contents: later turns of the conversation share the key', () => {
    const turn1 = contentAffinityKey(chat('be brief', 'hello'), undefined);
    const turn2 = contentAffinityKey(
      [...chat('be brief', 'hello'), { role: 'assistant', content: 'hi' }, { role: 'user', content: 'more' }],
      undefined,
    );
    expect(turn1).not.toBeNull();
    expect(turn2).toBe(turn1);
    expect(contentAffinityKey(chat('be brief', 'goodbye'), undefined)).not.toBe(turn1);
  });

  it('folds in the first 256 prompt_token_ids only, and only when the request carries some', () => {
    const base = Array.from({ length: 300 }, (_, i) => i);
    const key = contentAffinityKey(chat('s', 'u'), base);
    expect(contentAffinityKey(chat('s', 'u'), [...base.slice(0, 256), 9, 9, 9])).toBe(key);
    expect(contentAffinityKey(chat('s', 'u'), [1, ...base.slice(1)])).not.toBe(key);
    expect(contentAffinityKey(chat('s', 'u'), [])).toBe(contentAffinityKey(chat('s', 'u'), undefined));
  });

  it('gives a completions request (no messages) no key', () => {
    expect(contentAffinityKey(undefined, [1, 2, 3])).toBeNull();
    expect(contentAffinityKey([], [1, 2, 3])).toBeNull();
  });
});

describe('the newest router’s conversation pin', () => {
  /** a on conversation K's first turn, b holding (by routed-block tracking) the prefix of K's second turn */
  function warmed(options: Partial<NewestKvRouterOptions> = {}): NewestKvCacheAwareRouter {
    const r = router(options);
    const first = request(ids(1, 16), 'K');
    expect(r.route(first).server).toBe('a');
    r.finish('a', first, true);
    const other = request(ids(100, 16), null);
    expect(r.route(other).server).toBe('b');
    r.finish('b', other, true);
    return r;
  }

  it('sends a pinned conversation’s turn to its home server even when another server scores higher', () => {
    const r = warmed();
    const decision = r.route(request(ids(100, 24), 'K'));
    expect(decision.server).toBe('a');
    const score = Object.fromEntries(decision.candidates!.map((c) => [c.server, c.score]));
    expect(score['b']).toBeGreaterThan(score['a']!);
    // the same prompt without a pin follows the score
    expect(warmed().route(request(ids(100, 24), null)).server).toBe('b');
  });

  it('lets load_cap override the pin: a home server at the cap is passed over and the key re-pinned', () => {
    const r = warmed({ maxBatchSize: 2, loadCap: 0.5 });
    const steer = request(ids(600, 4), 'K');
    expect(r.route(steer).server).toBe('a');
    // a at active/max_batch_size = 0.5, not below the cap: the pin cannot hold
    const moved = request(ids(100, 24), 'K');
    expect(r.route(moved).server).toBe('b');
    r.finish('a', steer, true);
    r.finish('b', moved, true);
    // re-pinned to b: a turn whose prefix a holds (a scores higher, both under the cap) still goes to b
    const decision = r.route(request(ids(1, 16), 'K'));
    const score = Object.fromEntries(decision.candidates!.map((c) => [c.server, c.score]));
    expect(score['a']).toBeGreaterThan(score['b']!);
    expect(decision.server).toBe('b');
  });

  it('keeps at most affinityCacheSize conversations, evicting the least recently routed', () => {
    const r = warmed({ affinityCacheSize: 2 });
    r.route(request(ids(1000, 4), 'L'));
    r.route(request(ids(2000, 4), 'M'));
    expect(r.pinnedConversations).toBe(2);
    // K was evicted: its turn now follows the score to b
    expect(r.route(request(ids(100, 24), 'K')).server).toBe('b');
  });
});

describe('RouteAffinity', () => {
  it('refreshes a key on every pin, so the least recently routed one goes first', () => {
    const lru = new RouteAffinity(2);
    lru.pin('k1', 'a');
    lru.pin('k2', 'b');
    lru.pin('k1', 'b');
    lru.pin('k3', 'a');
    expect(lru.size).toBe(2);
    expect(lru.pinned('k2')).toBeUndefined();
    expect(lru.pinned('k1')).toBe('b');
    expect(lru.pinned('k3')).toBe('a');
  });
});
