// Sharding through Prometheus, end to end (docs/sharding.md): one live simulated cluster of four CTX servers whose
// orchestrator reaches servers 0-1 through one `kvsentinel serve` process and servers 2-3 through another, both
// scraped by a real Prometheus that evaluates the shipped rules. The fleet rules must see both sidecars, each server
// under exactly one of them, and add up what each sidecar exports.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startLiveCluster } from '../../src/sim/live/index.js';
import { liveConfig } from '../helpers/live-sim-target.js';
import { startPromStack, type PromStack } from '../helpers/prom-stack.js';
import { spawnCli } from '../helpers/run-cli.js';
import { freePort, type Cleanup } from '../helpers/test-resources.js';

type Sample = { metric: Record<string, string>; value: [number, string] };

interface Shard {
  readonly address: string;
  readonly servers: readonly string[];
}

/** Starts one `kvsentinel serve` relaying `workers`; resolves once it is ready, with its relay addresses. */
async function startShard(
  workers: readonly { id: string; url: string }[],
  dir: string,
  cleanups: Cleanup[],
): Promise<{ shard: Shard; relays: Record<string, string> }> {
  const webPort = await freePort();
  const relays: Record<string, string> = {};
  for (const w of workers) relays[w.id] = `127.0.0.1:${await freePort()}`;
  const file = join(dir, `shard-${webPort}.yaml`);
  await writeFile(
    file,
    stringify({
      web: { listen_address: `127.0.0.1:${webPort}` },
      relays: workers.map((w) => ({ id: w.id, upstream: w.url, listen: relays[w.id] })),
      relay: { drain_interval: '100ms' },
      server_info_interval: '1s',
    }),
  );
  const serve = spawnCli(['serve', '--config.file', file], cleanups);
  const address = `127.0.0.1:${webPort}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ready = await fetch(`http://${address}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) throw new Error(`kvsentinel serve ${address} not ready:\n${serve.err()}`);
    await sleep(100);
  }
  return { shard: { address, servers: workers.map((w) => w.id) }, relays };
}

const value = (s: Sample | undefined): number => Number(s?.value[1] ?? Number.NaN);

describe('two sidecars on disjoint servers, one fleet view through Prometheus', () => {
  const cleanups: Cleanup[] = [];
  const shards: Shard[] = [];
  let stack: PromStack;

  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kvs-shard-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const cluster = await startLiveCluster(liveConfig('healthy', ['ctx.servers=4']), {
      timeScale: 4,
      ctxUrls: async (workers) => {
        const halves = [workers.slice(0, 2), workers.slice(2)];
        const started = await Promise.all(halves.map((h) => startShard(h, dir, cleanups)));
        shards.push(...started.map((s) => s.shard));
        return Object.assign({}, ...started.map((s) => s.relays)) as Record<string, string>;
      },
    });
    // stopped before the sidecars (cleanups run newest first): the router's last requests still find their relays
    cleanups.push(() => cluster.stop());
    const workload = cluster.startWorkload();
    cleanups.push(async () => {
      await workload.stop();
    });
    stack = await startPromStack({ target: shards.map((s) => s.address) });
    cleanups.push(() => stack.stop());
  }, 90_000);

  afterAll(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('sees each server under exactly one sidecar, and each sidecar with its own servers', async () => {
    expect(shards.map((s) => s.servers)).toEqual([
      ['ctx0', 'ctx1'],
      ['ctx2', 'ctx3'],
    ]);
    const owners = await stack.waitFor('every server seen with requests', async () => {
      const r = await stack.query('job_server:kvsentinel_watching_sidecars:count');
      return r.length === 4 ? r : undefined;
    });
    expect(owners.map((s) => [s.metric.server, value(s)]).sort()).toEqual([
      ['ctx0', 1],
      ['ctx1', 1],
      ['ctx2', 1],
      ['ctx3', 1],
    ]);
    const perSidecar = await stack.query('instance:kvsentinel_servers:count');
    expect(Object.fromEntries(perSidecar.map((s) => [s.metric.instance, value(s)]))).toEqual(
      Object.fromEntries(shards.map((s) => [s.address, 2])),
    );
    for (const shard of shards) {
      const seen = await stack.query(`group by (server) (kvsentinel_requests_total{instance="${shard.address}"})`);
      expect(seen.map((s) => s.metric.server).sort()).toEqual([...shard.servers]);
    }
    expect(await stack.query('ALERTS{alertname="KvSentinelShardOverlap"}')).toEqual([]);
  }, 60_000);

  it("adds up the sidecars' rates and reports the worst verdict", async () => {
    const fleet = await stack.waitFor('fleet rates from both sidecars', async () => {
      const [prompt, cached] = await Promise.all([
        stack.query('job:kvsentinel_prompt_tokens:rate5m'),
        stack.query('job:kvsentinel_cached_tokens:rate5m'),
      ]);
      const perSidecar = await stack.query('instance:kvsentinel_prompt_tokens:rate5m > 0');
      return perSidecar.length === 2 && value(prompt[0]) > 0 && value(cached[0]) > 0 ? prompt[0] : undefined;
    });
    // the fleet sample at its evaluation time t is the sum of the per-sidecar samples the rule read at t
    const sumsAgree = async (fleetRule: string, sidecarRule: string): Promise<boolean> => {
      const [f] = await stack.query(fleetRule);
      if (f === undefined) return false;
      const parts = await stack.query(sidecarRule, f.value[0]);
      const sum = parts.reduce((a, s) => a + value(s), 0);
      return parts.length === 2 && Math.abs(sum - value(f)) <= 1e-9 * Math.max(1, Math.abs(sum));
    };
    for (const metric of ['prompt_tokens', 'cached_tokens', 'oracle_cached_tokens', 'tokens_lost']) {
      await stack.waitFor(`job:kvsentinel_${metric}:rate5m = the sidecars' sum`, async () =>
        (await sumsAgree(`job:kvsentinel_${metric}:rate5m`, `instance:kvsentinel_${metric}:rate5m`)) ? true : undefined,
      );
    }
    expect(fleet.metric).toEqual({ __name__: 'job:kvsentinel_prompt_tokens:rate5m', job: 'kvsentinel' });

    // the fleet hit lies between the two sidecars' hits, read at the fleet sample's evaluation time as the sums are.
    // The fleet group runs at its own offset, so a fleet evaluation can still have read the previous instance
    // samples (the instance group's evaluation at an earlier time was not yet written): retry until one reading is
    // consistent. A fleet hit outside the sidecars' range at every evaluation never is, and fails here.
    const within = await stack.waitFor("the fleet hit between the sidecars' hits", async () => {
      const [fleetHit] = await stack.query('job:kvsentinel_cached_tokens_per_prompt_tokens:ratio_rate5m');
      if (fleetHit === undefined) return undefined;
      const hits = await stack.query(
        'instance:kvsentinel_cached_tokens_per_prompt_tokens:ratio_rate5m',
        fleetHit.value[0],
      );
      if (hits.length !== 2) return undefined;
      const lo = Math.min(...hits.map(value));
      const hi = Math.max(...hits.map(value));
      const hit = value(fleetHit);
      return hit >= lo - 1e-9 && hit <= hi + 1e-9 ? { hit, lo, hi } : undefined;
    });
    expect(within.hit).toBeGreaterThan(0);
    const [gap] = await stack.query('job:kvsentinel_oracle_gap:ratio_rate5m');
    expect(value(gap)).toBeGreaterThanOrEqual(0);
    expect(value(gap)).toBeLessThan(1);

    // each sidecar's verdict code is the one it exports (read at the rule's evaluation time); the fleet's is the worst
    const order = ['healthy', 'unknown', 'degraded', 'inert'];
    await stack.waitFor("each sidecar's verdict code to name its exported verdict", async () => {
      const codes = await stack.query('instance:kvsentinel_verdict_code:max');
      if (codes.length !== 2) return undefined;
      for (const c of codes) {
        const at = c.value[0];
        const [exported] = await stack.query(`kvsentinel_verdict{instance="${c.metric.instance ?? ''}"} == 1`, at);
        if (order[value(c)] !== exported?.metric.verdict) return undefined;
      }
      return true;
    });
    const worst = await stack.waitFor('the fleet verdict', async () => {
      const [w] = await stack.query('job:kvsentinel_verdict_code:max');
      if (w === undefined) return undefined;
      const parts = await stack.query('instance:kvsentinel_verdict_code:max', w.value[0]);
      return parts.length === 2 ? { w, parts } : undefined;
    });
    expect(value(worst.w)).toBe(Math.max(...worst.parts.map(value)));
  }, 90_000);
});
