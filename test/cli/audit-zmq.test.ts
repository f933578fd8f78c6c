// `kvsentinel audit --zmq …` as a user runs it: the built CLI subscribes to a publisher in another process (here the
// test's), for --duration, and reports what the streams carried. The publisher keeps publishing during the window.
import { afterEach, describe, expect, it } from 'vitest';
import { ZmqKvPublisher } from '../../src/sim/live/zmq-kv-publisher.js';
import { kvEvent, storedBlock } from '../helpers/kv-event-builders.js';
import { runCli } from '../helpers/run-cli.js';

interface AuditJson {
  verdict: string;
  notes: string[];
  servers: {
    server: string;
    events: number;
    hash_mismatches: number;
    hash_matches: number;
    hash_unverifiable: number;
  }[];
  findings: { id: string; severity: string; summary: string; fix: string }[];
}

/**
 * A vLLM worker with sha256_cbor hashes under PYTHONHASHSEED=0: chains of three 2-token blocks, each request a new
 * root (a new prefix), published every 20 ms while the audit listens; `ints` as VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES.
 */
async function auditVllmCbor(ints: boolean, flags: string): Promise<{ report: AuditJson; code: number | null }> {
  const pub = new ZmqKvPublisher({ format: 'vllm', ranks: 1, blockSize: 2, vllmHashes: { seed: '0', ints } });
  await pub.start();
  publishers.push(pub);
  let n = 0;
  const timer = setInterval(() => {
    const base = 1000n * BigInt(n);
    const t = 10 * n;
    pub.publish(
      0,
      kvEvent({
        type: 'stored',
        parentHash: null,
        blocks: [storedBlock(base + 1n, 0, [t, t + 1]), storedBlock(base + 2n, 0, [t + 2, t + 3])],
      }),
    );
    pub.publish(
      0,
      kvEvent({ type: 'stored', parentHash: base + 2n, blocks: [storedBlock(base + 3n, 0, [t + 4, t + 5])] }),
    );
    n++;
  }, 20);
  try {
    const run = await runCli([
      'audit',
      '--zmq',
      `pod0=${pub.endpoint},engine=vllm,${flags}`,
      '--duration',
      '3s',
      '--json',
      '--fail-on',
      'critical',
    ]);
    expect(run.stderr).not.toMatch(/error/i);
    return { report: JSON.parse(run.stdout) as AuditJson, code: run.code };
  } finally {
    clearInterval(timer);
  }
}

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
      pub.publish(
        rank,
        kvEvent({ type: 'stored', parentHash: null, blocks: [storedBlock(2n ** 63n + BigInt(n), 0, [n, n + 1])] }),
      );
      n++;
    }, 20);
    try {
      const run = await runCli([
        'audit',
        '--zmq',
        `pod0=${pub.endpoint},engine=vllm,ranks=2,replay=${pub.replayEndpoint!}`,
        '--duration',
        '3s',
        '--json',
        '--fail-on',
        'critical',
      ]);
      expect(run.stderr).not.toMatch(/error/i);
      const report = JSON.parse(run.stdout) as {
        verdict: string;
        notes: string[];
        servers: { server: string; events: number; hash_mismatches: number }[];
        findings: { id: string }[];
      };
      expect(report.notes).toHaveLength(1);
      expect(report.notes[0]).toMatch(
        /^hash verification: pod0 publish vLLM block hashes kvsentinel does not recompute: their hash algorithm was not stated/,
      );
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

  it.each([
    ['bytes', false],
    ['int (VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES)', true],
  ])(
    'verifies a vLLM sha256_cbor stream with %s hashes and the right PYTHONHASHSEED: every block matches',
    async (_name, ints) => {
      const { report } = await auditVllmCbor(ints, 'hash=sha256_cbor,seed=0');
      const pod0 = report.servers.find((s) => s.server === 'pod0')!;
      expect(pod0.hash_matches).toBeGreaterThan(30);
      expect(pod0.hash_mismatches).toBe(0);
      expect(pod0.hash_unverifiable).toBe(0);
      expect(report.notes).toHaveLength(1);
      expect(report.notes[0]).toMatch(
        /^hash verification: pod0 hash with vLLM sha256_cbor; kvsentinel recomputes each block .*\(root blocks from the PYTHONHASHSEED given\); \d+ blocks match, 0 mismatch, 0 unverifiable/,
      );
      expect(report.findings.map((f) => f.id)).not.toContain('hash-mismatch');
    },
  );

  it('pages hash-mismatch with vLLM advice when the workers do not hash with the PYTHONHASHSEED given (bytes hashes)', async () => {
    const { report, code } = await auditVllmCbor(false, 'hash=sha256_cbor,seed=1');
    const pod0 = report.servers.find((s) => s.server === 'pod0')!;
    // children chain to their published parents and match; the roots, hashed under seed 0, do not
    expect(pod0.hash_matches).toBeGreaterThan(15);
    expect(pod0.hash_mismatches).toBeGreaterThan(15);
    const finding = report.findings.find((f) => f.id === 'hash-mismatch');
    expect(finding?.severity).toBe('critical');
    expect(finding?.summary).toMatch(/do not recompute with vLLM sha256_cbor and the PYTHONHASHSEED given/);
    expect(finding?.fix).toMatch(/--prefix-caching-hash-algo sha256_cbor and the same PYTHONHASHSEED/);
    expect(code).toBe(1);
  });

  it('keeps a wrong seed unverifiable, not a mismatch, when int hashes leave no parent to chain from', async () => {
    const { report } = await auditVllmCbor(true, 'hash=sha256_cbor,seed=1');
    const pod0 = report.servers.find((s) => s.server === 'pod0')!;
    expect(pod0.hash_matches).toBe(0);
    expect(pod0.hash_mismatches).toBe(0);
    expect(pod0.hash_unverifiable).toBeGreaterThan(30);
    expect(report.findings.map((f) => f.id)).not.toContain('hash-mismatch');
  });
});
