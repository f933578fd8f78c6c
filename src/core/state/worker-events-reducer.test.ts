import { describe, expect, it } from 'vitest';
import type { WorkerEventsObservation } from '../observe/observation.js';
import { harnessModel, prompt, storedEvent, totalOf } from '../../../test/helpers/state-harness.js';
import { counterKey } from './counter-schema.js';
import { SourceHealthBoard } from './source-health-board.js';
import { WorkerEventsReducer } from './worker-events-reducer.js';

function reducer() {
  const model = harnessModel();
  const sources = new SourceHealthBoard(16);
  return { model, sources, events: new WorkerEventsReducer(model, sources) };
}

const drain = (
  server: string,
  firstSeq: number,
  ...events: WorkerEventsObservation['events']
): WorkerEventsObservation => ({
  kind: 'worker-events',
  ts: 2_000,
  server,
  firstSeq,
  events,
});

describe('WorkerEventsReducer', () => {
  it('a drain fills worker truth at once; the replica waits for the router to read the events', () => {
    const { model, events } = reducer();
    events.workerEvents(drain('ctx0', 0, storedEvent(prompt(3), 0)), null);
    expect(model.truth.blockCount('ctx0')).toBe(3);
    expect(model.replica.blockCount('ctx0')).toBe(0);
    expect([...model.relayOf('ctx0').deliver(0, 1)]).toHaveLength(1);
    expect(totalOf(model, counterKey('drains', 'ctx0'))).toBe(1);
    expect(totalOf(model, counterKey('storedEvents', 'ctx0'))).toBe(1);
    expect(totalOf(model, counterKey('events', 'ctx0'))).toBe(1);
    // the pull path brings events: served requests count against it from now on
    expect(model.pullEvents.of('ctx0')).toEqual({ lastPullEventTs: 2_000, newBlockOutcomesSincePullEvent: 0 });
  });

  it('truth is seen only once a stored event arrived; an empty drain is counted as such', () => {
    const { model, events } = reducer();
    events.workerEvents(drain('ctx0', 0), null);
    expect(events.truthSeen).toBe(false);
    expect(totalOf(model, counterKey('emptyDrains', 'ctx0'))).toBe(1);
    expect(model.pullEvents.watching('ctx0')).toBe(false);
    events.workerEvents(drain('ctx0', 0, storedEvent(prompt(1), 0)), null);
    expect(events.truthSeen).toBe(true);
  });

  it('a drain says the relay reads its worker again', () => {
    const { sources, events } = reducer();
    sources.report(1_000, 'relay:ctx0', false, 'ECONNREFUSED');
    events.workerEvents(drain('ctx0', 0), null);
    expect(sources.get('relay:ctx0')?.up).toBe(true);
  });

  it('counts a gap in the event ids per server and rank, and what it missed', () => {
    const { model, events } = reducer();
    events.workerEvents(drain('ctx0', 0, storedEvent(prompt(1), 0), storedEvent(prompt(1, 0, 50), 3)), null);
    expect(totalOf(model, counterKey('gaps', 'ctx0'))).toBe(1);
    expect(totalOf(model, counterKey('missedEvents', 'ctx0'))).toBe(2);
    expect(totalOf(model, counterKey('rankGaps', 'ctx0', 0))).toBe(1);
  });

  it("a stream the router reads itself fills the replica at once; the router's first poll of the pull path clears it", () => {
    const { model, events } = reducer();
    const streamed = {
      ...drain('ctx1', 0, storedEvent(prompt(2), 0)),
      stream: { engine: 'vllm', hashes: 'native' },
    } as const;
    events.streamSequence({
      kind: 'stream-sequence',
      ts: 1_000,
      server: 'ctx1',
      rank: 0,
      change: 'subscribed',
      lost: 0,
      filled: 0,
    });
    events.workerEvents(streamed, null);
    expect(model.paths.streamed('ctx1')).toBe(true);
    expect(model.replica.blockCount('ctx1')).toBe(2);
    expect(totalOf(model, counterKey('streamEvents', 'ctx1'))).toBe(1);
    expect(model.paths.routerPolled('ctx1')).toBe(true);
  });

  it("a stream's lost batches are a gap; a new publisher life is a reset that clears the rank's truth", () => {
    const { model, events } = reducer();
    events.workerEvents(
      { ...drain('ctx1', 0, storedEvent(prompt(2), 0)), stream: { engine: 'vllm', hashes: 'native' } },
      null,
    );
    events.streamSequence({
      kind: 'stream-sequence',
      ts: 3_000,
      server: 'ctx1',
      rank: 0,
      change: 'gap',
      lost: 4,
      filled: 1,
    });
    expect(totalOf(model, counterKey('missedEvents', 'ctx1'))).toBe(4);
    expect(totalOf(model, counterKey('streamBatchesFilled', 'ctx1'))).toBe(1);
    events.streamSequence({
      kind: 'stream-sequence',
      ts: 4_000,
      server: 'ctx1',
      rank: 0,
      change: 'reset',
      lost: 0,
      filled: 0,
    });
    expect(totalOf(model, counterKey('resets', 'ctx1'))).toBe(1);
    expect(model.truth.blockCount('ctx1')).toBe(0);
  });
});
