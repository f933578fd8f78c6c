import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { FINDING_IDS, GRADED_FINDINGS } from '../../src/core/diagnosis/finding-catalog.js';
import { noScanFallbacks, SCAN_FALLBACK_REASONS } from '../../src/core/relay/scan-fallback.js';
import { createExporter } from '../../src/outputs/exporter.js';
import { METRICS } from '../../src/outputs/metric-catalog.js';
import { silentLogger } from '../../src/sources/ports.js';
import type { SourceStatus } from '../../src/sources/source-status.js';
import { promtoolProblems } from '../helpers/promtool.js';
import { relayCounters, serverStats, snapshotFixture } from '../helpers/snapshot-fixture.js';
import { NO_SIDECAR_STATS } from '../../src/core/observe/sidecar-stats.js';

const sources: SourceStatus[] = [
  {
    source: 'relay:ctx0',
    up: true,
    seen: true,
    lastError: null,
    lastOkAt: 1,
    lastErrorAt: null,
    errors: {},
    badInput: {},
  },
  {
    source: 'relay:ctx1',
    up: false,
    seen: true,
    lastError: 'ECONNREFUSED',
    lastOkAt: null,
    lastErrorAt: 2,
    errors: { connect: 3, parse: 1 },
    badInput: { 'hash-not-integer': 2 },
  },
];

function make(snapshot = snapshotFixture, opts: { failSnapshot?: boolean } = {}) {
  const registry = new Registry();
  const exporter = createExporter({
    registry,
    sources: () => sources,
    snapshot: () => {
      if (opts.failSnapshot === true) throw new Error('state broke');
      return snapshot();
    },
    reload: () => ({ successful: true, lastSuccessAt: 1_700_000_000_000 }),
    build: { version: '0.1.0', revision: 'abc123', nodejsVersion: process.version },
    logger: silentLogger,
  });
  return { registry, exporter };
}

describe('exporter', () => {
  it('exports every catalog family with values from the snapshot', async () => {
    const { exporter } = make();
    const text = await exporter.metrics();
    for (const spec of Object.values(METRICS)) expect(text).toContain(`# TYPE ${spec.name} ${spec.type}`);
    expect(text).toContain('kvsentinel_up{source="relay:ctx0"} 1');
    expect(text).toContain('kvsentinel_up{source="relay:ctx1"} 0');
    expect(text).toContain('kvsentinel_source_errors_total{source="relay:ctx1",reason="connect"} 3');
    expect(text).toContain('kvsentinel_bad_input_total{source="relay:ctx1",code="hash-not-integer"} 2');
    expect(text).toContain('kvsentinel_kv_events_total{server="ctx0",rank="0",type="stored"} 40');
    expect(text).toContain('kvsentinel_kv_event_gaps_total{server="ctx1",rank="0"} 2');
    expect(text).toContain('kvsentinel_worker_table_blocks{server="ctx0",rank="0",cache_level="1"} 4');
    expect(text).toContain('kvsentinel_router_table_blocks{server="ctx1"} 5');
    expect(text).toContain('kvsentinel_hash_checks_total{server="ctx0",result="unverifiable"} 1');
    expect(text).toContain('kvsentinel_cached_tokens_total{server="ctx0"} 70000');
    expect(text).toContain('kvsentinel_decisions_total{outcome="not_oracle_best"} 25');
    expect(text).toContain('kvsentinel_finding_active{id="cache-signal-inert",severity="critical"} 1');
    expect(text).toContain('kvsentinel_finding_active{id="events-absent",severity="critical"} 0');
    // one series per finding, plus one per lower severity of each graded finding (render-drift: warning, info)
    expect(text.match(/^kvsentinel_finding_active\{/gm)).toHaveLength(FINDING_IDS.length + 2 * GRADED_FINDINGS.length);
    expect(text).toContain('kvsentinel_finding_active{id="render-drift",severity="warning"} 0');
    expect(text).toContain('kvsentinel_verdict{verdict="inert"} 1');
    expect(text).toContain('kvsentinel_verdict{verdict="healthy"} 0');
    expect(text).toContain('kvsentinel_config_last_reload_success_timestamp_seconds 1700000000');
    expect(text).toMatch(/kvsentinel_build_info\{version="0.1.0",revision="abc123",nodejs_version="v\d+/);
    expect(text).toContain('process_cpu_seconds_total');
  });

  it('exports since when a ZMQ rank lacks history, per server and rank, while it does', async () => {
    const server = {
      ...snapshotFixture().servers[0]!,
      historyIncomplete: [{ rank: 1, since: 1_700_000_500_000, missingBatches: 20 }],
    };
    const { exporter } = make(() => snapshotFixture({ servers: [server] }));
    expect(await exporter.metrics()).toContain(
      'kvsentinel_stream_history_incomplete_since_seconds{server="ctx0",rank="1"} 1700000500\n',
    );
    const { exporter: complete } = make();
    expect(await complete.metrics()).not.toContain('kvsentinel_stream_history_incomplete_since_seconds{');
  });

  it('computes values at scrape time', async () => {
    let requests = 1;
    const { exporter } = make(() => snapshotFixture({ servers: [{ ...snapshotFixture().servers[0]!, requests }] }));
    expect(await exporter.metrics()).toContain('kvsentinel_requests_total{server="ctx0"} 1\n');
    requests = 5;
    expect(await exporter.metrics()).toContain('kvsentinel_requests_total{server="ctx0"} 5\n');
  });

  it('still exports source health when the snapshot fails', async () => {
    const { exporter } = make(snapshotFixture, { failSnapshot: true });
    const text = await exporter.metrics();
    expect(text).toContain('kvsentinel_up{source="relay:ctx1"} 0');
    expect(text).not.toContain('kvsentinel_verdict{');
  });

  it('observes relay durations into the histogram', async () => {
    const { exporter } = make();
    exporter.observeRelayDuration('ctx0', 0.002);
    const text = await exporter.metrics();
    expect(text).toContain('kvsentinel_relay_request_duration_seconds_bucket{le="0.0025",server="ctx0"} 1');
    expect(text).toContain('kvsentinel_relay_request_duration_seconds_count{server="ctx0"} 1');
  });

  it('counts requests the relay refused, by server and reason', async () => {
    const { exporter } = make();
    expect(await exporter.metrics()).not.toContain('kvsentinel_relay_requests_rejected_total{');
    exporter.countRelayRejected('ctx0', 'body_too_large', 0);
    expect(await exporter.metrics()).toContain(
      'kvsentinel_relay_requests_rejected_total{server="ctx0",reason="body_too_large"} 0\n',
    );
    exporter.countRelayRejected('ctx0', 'body_too_large');
    exporter.countRelayRejected('ctx0', 'body_too_large');
    expect(await exporter.metrics()).toContain(
      'kvsentinel_relay_requests_rejected_total{server="ctx0",reason="body_too_large"} 2\n',
    );
  });

  it("exports each relay's slow paths by reason from the snapshot's sidecar stats, every reason from the start", async () => {
    const relay = (counts: Record<string, number>) =>
      relayCounters('ctx0', {
        abandonedPolls: 3,
        capturesTruncated: 2,
        consumersExpired: 1,
        upstreamRetries: 5,
        scanFallbacks: { ...noScanFallbacks(), ...counts },
      });
    let snapshot = snapshotFixture({ sidecar: { ...NO_SIDECAR_STATS, relays: [relay({ inline: 4, text_path: 1 })] } });
    const { exporter } = make(() => snapshot);
    const text = await exporter.metrics();
    expect(text).toContain('kvsentinel_relay_scan_fallbacks_total{server="ctx0",reason="inline"} 4\n');
    expect(text).toContain('kvsentinel_relay_scan_fallbacks_total{server="ctx0",reason="text_path"} 1\n');
    for (const reason of SCAN_FALLBACK_REASONS)
      expect(text).toContain(`kvsentinel_relay_scan_fallbacks_total{server="ctx0",reason="${reason}"} `);
    expect(text).toContain('kvsentinel_relay_abandoned_polls_total{server="ctx0"} 3\n');
    expect(text).toContain('kvsentinel_relay_upstream_retries_total{server="ctx0"} 5\n');
    expect(text).toContain('kvsentinel_cache_dropped_total{cache="relay_captures",reason="cap"} 2\n');
    expect(text).toContain('kvsentinel_cache_dropped_total{cache="relay_consumers",reason="idle"} 1\n');
    snapshot = snapshotFixture({ sidecar: { ...NO_SIDECAR_STATS, relays: [relay({ inline: 9 })] } });
    expect(await exporter.metrics()).toContain(
      'kvsentinel_relay_scan_fallbacks_total{server="ctx0",reason="inline"} 9\n',
    );
  });

  it("exports a relay's unreadable requests by reason from the state's counts, every reason at 0 first", async () => {
    const byReason = { unknown_encoding: 0, malformed: 2, too_large: 0, no_prompt: 1 };
    const snapshot = snapshotFixture({
      servers: [serverStats('ctx0', { unreadableRequests: 3, unreadableByReason: byReason }), serverStats('ctx1')],
      sidecar: { ...NO_SIDECAR_STATS, relays: [relayCounters('ctx0')] },
    });
    const text = await make(() => snapshot).exporter.metrics();
    expect(text).toContain('kvsentinel_relay_requests_unreadable_total{server="ctx0",reason="malformed"} 2\n');
    expect(text).toContain('kvsentinel_relay_requests_unreadable_total{server="ctx0",reason="no_prompt"} 1\n');
    expect(text).toContain('kvsentinel_relay_requests_unreadable_total{server="ctx0",reason="too_large"} 0\n');
    // ctx1 has no relay: no series
    expect(text).not.toContain('kvsentinel_relay_requests_unreadable_total{server="ctx1"');
  });

  it('passes promtool check metrics for every kvsentinel_* family', async () => {
    const { exporter } = make();
    exporter.observeRelayDuration('ctx0', 0.2);
    exporter.countRelayRejected('ctx0', 'body_too_large');
    const { problems } = promtoolProblems(await exporter.metrics());
    expect(problems).toEqual([]);
  });
});

describe('promtool helper', () => {
  it('does report a badly named kvsentinel family (the lint is not vacuous)', () => {
    const bad = '# HELP kvsentinel_foo_ms x\n# TYPE kvsentinel_foo_ms counter\nkvsentinel_foo_ms 1\n';
    expect(promtoolProblems(bad).problems.length).toBeGreaterThan(0);
  });
});
