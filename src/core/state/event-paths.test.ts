import { describe, expect, it } from 'vitest';
import { EventPaths } from './event-paths.js';

const VLLM = { engine: 'vllm', hashes: 'rekeyed' } as const;
const SGLANG = { engine: 'sglang', hashes: 'native' } as const;

describe('EventPaths', () => {
  it('auto mode sees worker events once a drain, a router poll or a stream shows them; relay and exclusive always', () => {
    for (const seen of [
      (p: EventPaths) => p.workerEvents('ctx0', null),
      (p: EventPaths) => p.routerPolled('ctx0'),
      (p: EventPaths) => p.streamSeen('ctx0', true),
    ]) {
      const paths = new EventPaths();
      expect(paths.seesWorkerEvents('auto')).toBe(false);
      expect(paths.seesWorkerEvents('relay')).toBe(true);
      expect(paths.seesWorkerEvents('exclusive')).toBe(true);
      seen(paths);
      expect(paths.seesWorkerEvents('auto')).toBe(true);
      expect(paths.seesWorkerEvents('watch')).toBe(false);
    }
  });

  it("a stream fills the router's replica until the router polls the server's pull path", () => {
    const paths = new EventPaths();
    expect(paths.workerEvents('ctx0', VLLM)).toBe(true);
    // the first fill needs a created event, the later ones not
    expect(paths.fillReplicaFromStream('ctx0')).toBe(true);
    expect(paths.fillReplicaFromStream('ctx0')).toBe(false);
    expect(paths.seesRouterPolls).toBe(false);
    // the router reads the pull path: what the stream put in the replica is to be cleared, once
    expect(paths.routerPolled('ctx0')).toBe(true);
    expect(paths.seesRouterPolls).toBe(true);
    expect(paths.routerPolled('ctx0')).toBe(false);
    expect(paths.workerEvents('ctx0', VLLM)).toBe(false);
  });

  it('a drained server has a pull path: its stream does not fill the replica', () => {
    const paths = new EventPaths();
    expect(paths.workerEvents('ctx1', null)).toBe(false);
    expect(paths.workerEvents('ctx1', VLLM)).toBe(false);
    expect(paths.workerEvents('ctx2', VLLM)).toBe(true);
  });

  it("keeps each server's first stream origin, listed by server name; a subscription alone is streamed", () => {
    const paths = new EventPaths();
    paths.workerEvents('ctx1', SGLANG);
    paths.workerEvents('ctx0', VLLM);
    paths.workerEvents('ctx1', VLLM);
    expect(paths.streamOrigins()).toEqual([
      ['ctx0', VLLM],
      ['ctx1', SGLANG],
    ]);
    expect(paths.streamOrigin('ctx9')).toBeNull();
    expect(paths.streamed('ctx0')).toBe(false);
    paths.streamSeen('ctx0', true);
    paths.streamSeen('ctx3', false);
    expect(paths.streamed('ctx0')).toBe(true);
    expect(paths.streamed('ctx3')).toBe(false);
  });
});
