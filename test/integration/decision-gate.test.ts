// The relay's decision gate: events that arrive while a decision is still being read wait for it, and only for the
// decisions before them; a decision that never comes (null) releases what waited.
import { describe, expect, it } from 'vitest';
import type { Observation } from '../../src/core/observe/observation.js';
import { DecisionGate } from '../../src/sources/relay/decision-gate.js';
import { RecordingSink } from '../helpers/recording-sink.js';

const events = (ts: number): Observation => ({ kind: 'worker-events', ts, server: 'ctx0', firstSeq: ts, events: [] });
const decision = (ts: number): Observation => ({
  kind: 'decision',
  ts,
  requestId: `r${ts}`,
  correlationId: null,
  server: 'ctx0',
  promptTokens: null,
  promptTokenCount: null,
  inflight: null,
});

describe('DecisionGate', () => {
  it('passes observations straight through while no decision is open', () => {
    const sink = new RecordingSink();
    const gate = new DecisionGate(sink);
    gate.apply(events(1));
    expect(sink.observations.map((o) => o.ts)).toEqual([1]);
  });

  it('holds what arrives behind an open decision until it is recorded, in arrival order', () => {
    const sink = new RecordingSink();
    const gate = new DecisionGate(sink);
    gate.apply(events(1));
    const first = gate.slot();
    gate.apply(events(2));
    const second = gate.slot();
    gate.apply(events(3));
    expect(sink.observations.map((o) => o.ts)).toEqual([1]);
    expect(gate.held).toBe(2);
    second(decision(20));
    // still behind the first decision
    expect(sink.observations.map((o) => o.ts)).toEqual([1]);
    first(decision(10));
    expect(sink.observations.map((o) => `${o.kind}:${o.ts}`)).toEqual([
      'worker-events:1',
      'decision:10',
      'worker-events:2',
      'decision:20',
      'worker-events:3',
    ]);
    expect(gate.held).toBe(0);
    gate.apply(events(4));
    expect(sink.observations.at(-1)?.ts).toBe(4);
  });

  it('a slot filled with null (no decision after all) releases what waited; a second fill is ignored', () => {
    const sink = new RecordingSink();
    const gate = new DecisionGate(sink);
    const slot = gate.slot();
    gate.apply(events(5));
    slot(null);
    slot(decision(6));
    expect(sink.observations.map((o) => `${o.kind}:${o.ts}`)).toEqual(['worker-events:5']);
  });
});
