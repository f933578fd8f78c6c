// The replay client against a real ROUTER on a free port: requests paced, one socket per round (an earlier round's
// late replies never reach a later one), the end marker ends the round.
import { afterEach, describe, expect, it } from 'vitest';
import { Router } from 'zeromq';
import { END_SEQ_FRAME, encodeSeq } from '../../core/stream/stream-frames.js';
import { silentLogger } from '../ports.js';
import type { RankPipeline } from './rank-pipeline.js';
import { ReplayClient } from './replay-client.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

/** What the client hands the pipeline: replies and ends, with a sequencer that is replaying until an end. */
function recordingPipeline(): { pipeline: RankPipeline; replies: bigint[]; ends: number } {
  const seen = { replies: [] as bigint[], ends: 0, replaying: true };
  const pipeline = {
    sequencer: {
      get readingReplay() {
        return seen.replaying;
      },
    },
    replayed: (seq: bigint) => seen.replies.push(seq),
    replayEnded: () => {
      seen.ends++;
      seen.replaying = false;
    },
  } as unknown as RankPipeline;
  return {
    pipeline,
    get replies() {
      return seen.replies;
    },
    get ends() {
      return seen.ends;
    },
  };
}

async function router(): Promise<{ socket: Router; endpoint: string }> {
  const socket = new Router({ linger: 0 });
  await socket.bind('tcp://127.0.0.1:0');
  closers.push(() => socket.close());
  return { socket, endpoint: socket.lastEndpoint ?? '' };
}

const waitFor = async (check: () => boolean, what: string): Promise<void> => {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

/** A client of `endpoint` feeding a recording pipeline, closed after the test. */
function startClient(endpoint: string, timeoutMs: number, minIntervalMs: number) {
  const client = new ReplayClient(
    endpoint,
    { receiveHighWaterMark: 1_000, timeoutMs, minIntervalMs },
    { logger: silentLogger, name: 'zmq:ctx0 rank 0', malformed: () => undefined },
  );
  closers.push(() => client.close());
  const rec = recordingPipeline();
  client.attach(rec.pipeline);
  return { client, rec };
}

describe('ReplayClient', () => {
  it('paces its requests, drops an earlier round with its socket, and ends a round at the end marker', async () => {
    const { socket, endpoint } = await router();
    const { client, rec } = startClient(endpoint, 5_000, 300);

    const requests = socket[Symbol.asyncIterator]();
    const askedAt = Date.now();
    client.request(5n);
    const first = (await requests.next()).value as Buffer[];
    expect(first[2]?.readBigUInt64BE(0)).toBe(5n);
    // a second request drops the first round; it waits for its turn
    client.request(7n);
    const second = (await requests.next()).value as Buffer[];
    // sent no sooner than 300 ms after the first was (which was after askedAt); a timer never fires early
    expect(Date.now() - askedAt).toBeGreaterThanOrEqual(299);
    expect(second[2]?.readBigUInt64BE(0)).toBe(7n);
    expect(second[0]?.equals(first[0]!)).toBe(false); // a socket of its own

    // the first round's answer comes late: its socket is closed, nothing of it arrives
    await socket.send([first[0]!, '', encodeSeq(5n), 'late']);
    await socket.send([first[0]!, '', END_SEQ_FRAME, '']);
    await socket.send([second[0]!, '', encodeSeq(7n), 'b7']);
    await socket.send([second[0]!, '', encodeSeq(8n), 'b8']);
    await socket.send([second[0]!, '', END_SEQ_FRAME, '']);
    await waitFor(() => rec.ends > 0, 'the round to end');
    expect(rec.replies).toEqual([7n, 8n]);
    expect(rec.ends).toBe(1);
  });

  it('ends a round that brought no end marker at its timeout', async () => {
    const { endpoint } = await router();
    const { client, rec } = startClient(endpoint, 200, 0);
    client.request(0n);
    await waitFor(() => rec.ends > 0, 'the timeout');
    expect(rec.replies).toEqual([]);
  });
});
