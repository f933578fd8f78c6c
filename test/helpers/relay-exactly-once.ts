// The relay's exactly-once check against a live orchestrator: what the router applied, then what its next poll brings,
// is every event the worker served, once, in order. The router polls only in finish_request, so events the relay
// drained after its last poll (an attention-DP rank's events arrive after the gather period) wait for that poll.
import { request } from 'undici';
import { expect } from 'vitest';
import { parseKvEvents } from '../../src/core/wire/parse-kv-events.js';
import { digestEvent } from '../../src/sim/live/event-digest.js';
import type { EventDigest, LiveCluster } from '../../src/sim/live/index.js';

type AppliedDoc = { servers: { server: string; events: EventDigest[] }[] };

export async function appliedBy(url: string, id: string): Promise<EventDigest[]> {
  return (
    (JSON.parse(await (await request(url)).body.text()) as AppliedDoc).servers.find((s) => s.server === id)?.events ??
    []
  );
}

/** the router's next poll, made by the test: what the relay still holds for the consumer of that port */
export async function nextPoll(address: string): Promise<EventDigest[]> {
  const res = await request(`http://${address}/kv_cache_events`, { method: 'POST' });
  return parseKvEvents(await res.body.text()).events.map((p) => digestEvent(p.event));
}

/**
 * What an orchestrator's router applied per worker, then what its next poll brings (events the relay drained
 * after its last poll wait there for it), equals what the worker served: every event once, in order, none lost.
 */
export async function expectExactlyOnce(
  cluster: LiveCluster,
  appliedUrl: string,
  relayAddress: (id: string) => string,
): Promise<void> {
  for (const w of cluster.workers) {
    const applied = await appliedBy(appliedUrl, w.id);
    expect(applied.length).toBeGreaterThan(0);
    // the relay drains on a fresh poll: the tail comes with it
    const rest = await nextPoll(relayAddress(w.id));
    expect([...applied, ...rest]).toEqual(cluster.worker(w.id).served.entries);
  }
}
