// Reduced soak in CI (100 k events of churn, 10 k decisions): every cache on the path stays within its explicit
// bound and counts what it dropped. Memory is asserted through those bounds, not through timing or RSS (shared CI
// machines make RSS noisy); scripts/soak.sh runs the full size and records the RSS curve.
import { appendFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MAX_FORGOTTEN } from '../../src/core/relay/event-buffer.js';
import { runSoak } from './soak-run.js';

const EVENTS = Number(process.env.KVS_SOAK_EVENTS ?? 100_000);
const DECISIONS = Number(process.env.KVS_SOAK_DECISIONS ?? 10_000);
const WORKING_SET = 4_096;
/** a file to append the memory samples to (one JSON line each) */
const CURVE = process.env.KVS_SOAK_CURVE;

describe('soak (reduced)', () => {
  it(
    `${EVENTS} events of churn and ${DECISIONS} decisions: bounded caches, counted drops, worker tables at the working set`,
    () => {
      const limits = { trajectories: 1_000, pendingDecisions: 500, relayBufferEvents: 5_000 };
      const bufferMaxEvents = 5_000;
      const r = runSoak({
        events: EVENTS,
        decisions: DECISIONS,
        workingSet: WORKING_SET,
        limits,
        bufferMaxEvents,
        samples: 20,
        onSample: CURVE !== undefined ? (s) => appendFileSync(CURVE, `${JSON.stringify(s)}\n`) : undefined,
      });
      // relay buffer: within its bound; the silent replica was forgotten, so it pinned nothing
      expect(r.maxRetainedEvents).toBeLessThanOrEqual(bufferMaxEvents);
      expect(r.buffer.consumers.map((c) => c.consumer)).toEqual(['router']);
      expect(r.buffer.expiredConsumers).toBe(1);
      expect(r.buffer.forgottenDiscarded).toBe(0);
      expect(MAX_FORGOTTEN).toBeGreaterThan(0);
      const router = r.buffer.consumers[0];
      expect(router?.dropped).toBe(0);
      expect(router?.delivered).toBe(r.buffer.nextSeq - (router?.backlog ?? 0));
      // worker truth and router replica: churn keeps them at the working set
      for (const s of r.snapshot.servers) {
        const blocks = s.ranks.reduce((n, k) => n + Object.values(k.blocksByLevel).reduce((a, b) => a + b, 0), 0);
        expect(blocks).toBeLessThanOrEqual(WORKING_SET);
        expect(blocks).toBeGreaterThan(WORKING_SET / 2);
        expect(s.ranks.every((k) => k.gaps === 0 && k.resets === 0)).toBe(true);
        expect(s.workerTableBlocksEvicted + s.routerTableBlocksEvicted).toBe(0); // far under state.max_table_blocks
      }
      // the joins: trajectories and unanswered decisions hit their caps and were counted, not kept
      expect(r.snapshot.dropped.trajectoriesEvicted).toBe(DECISIONS / 5 - limits.trajectories);
      expect(r.snapshot.dropped.pendingDecisionsEvicted + r.snapshot.dropped.pendingDecisionsExpired).toBe(
        DECISIONS / 10 - limits.pendingDecisions,
      );
      expect(r.snapshot.requests).toBe(DECISIONS);
      expect(r.samples.length).toBeGreaterThanOrEqual(20);
    },
    Math.max(120_000, EVENTS / 2),
  ); // ~6 k events/s on a loaded core: 10 M in under an hour
});
