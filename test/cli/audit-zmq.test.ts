// `kvsentinel audit --zmq …` as a user runs it: the built CLI subscribes to a publisher in another process (here the
// test's), for --duration, and reports what the streams carried. The publisher keeps publishing during the window.
import { afterEach, describe, expect, it } from 'vitest';
import { ZmqKvPublisher } from '../../src/sim/live/zmq-kv-publisher.js';
import { kvEvent, storedBlock } from '../helpers/kv-event-builders.js';
import { runCli } from '../helpers/run-cli.js';

const publishers: ZmqKvPublisher[] = [];
afterEach(async () => {
  for (const p of publishers.splice(0)) await p.stop();
});

describe('kvsentinel audit --zmq', () => {
  it('audits a vLLM stream live: counts its stored blocks, says once that its hashes are unverifiable, gives no all-clear without decisions', async () => {
    const pub = new ZmqKvPublisher({ format: 'vllm', ranks: 2, blockSize: 2, replay: true });
    await pub.start();
    publishers.push(pub);
    let n = 0;
    const timer = setInterval(() => {
      const rank = n % 2;
      pub.publish(rank, kvEvent({ type: 'stored', parentHash: null, blocks: [storedBlock(2n ** 63n + BigInt(n), 0, [n, n + 1])] }));
      n++;
    }, 20);
    try {
      const run = await runCli(['audit', '--zmq', `pod0=${pub.endpoint},engine=vllm,ranks=2,replay=${pub.replayEndpoint!}`, '--duration', '3s', '--json', '--fail-on', 'critical']);
      expect(run.stderr).not.toMatch(/error/i);
      const report = JSON.parse(run.stdout) as { verdict: string; notes: string[]; servers: { server: string; events: number; hash_mismatches: number }[]; findings: { id: string }[] };
      expect(report.notes).toHaveLength(1);
      expect(report.notes[0]).toMatch(/^hash verification: pod0 publish vllm block hashes kvsentinel does not recompute/);
      const pod0 = report.servers.find((s) => s.server === 'pod0')!;
      expect(pod0.events).toBeGreaterThan(20);
      expect(pod0.hash_mismatches).toBe(0);
      expect(report.findings.map((f) => f.id)).not.toContain('source-unreachable');
      // a stream alone shows where prefixes are, not how the router routes: no all-clear (exit 3)
      expect(report.verdict).toBe('unknown');
      expect(report.findings.map((f) => f.id)).toContain('evidence-insufficient');
      expect(run.code).toBe(3);
    } finally {
      clearInterval(timer);
    }
  });
});
