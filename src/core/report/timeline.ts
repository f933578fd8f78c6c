// The audit's time series: cumulative counters of the state's snapshots, sampled over the run, so the report can
// plot what happened when (hit ratios, stickiness, decisions, events, score terms per interval). Counts and server
// ids only: nothing of prompts. Memory is bounded: at `maxSamples` every other sample goes and the sampling interval
// doubles, so the whole window stays covered at a coarser step (counters are cumulative, so no count is lost).
import { KvsentinelError } from '../errors.js';
import type { SentinelSnapshot } from '../state/snapshot.js';
import type { Verdict } from '../diagnosis/verdict.js';

export interface RankSample {
  readonly rank: number;
  readonly events: number;
  readonly gaps: number;
  readonly resets: number;
}

export interface ServerSample {
  readonly server: string;
  readonly requests: number;
  readonly promptTokens: number;
  readonly cachedTokens: number;
  readonly oracleCachedTokens: number;
  readonly predictedRouterCachedTokens: number;
  readonly ranks: readonly RankSample[];
}

export interface TimelineSample {
  /** snapshot time, ms */
  readonly t: number;
  readonly verdict: Verdict;
  readonly findings: readonly string[];
  readonly requests: number;
  readonly oracleBest: number;
  readonly notOracleBest: number;
  readonly noPrefix: number;
  readonly followups: number;
  readonly sticky: number;
  readonly scoreTerms: SentinelSnapshot['decisions']['scoreTerms'];
  readonly servers: readonly ServerSample[];
}

export interface TimelineOptions {
  /** the bound on samples kept (≥ 4) */
  readonly maxSamples: number;
  /** the first sampling interval, ms; doubles every time the bound is reached */
  readonly intervalMs: number;
}

export const DEFAULT_TIMELINE_OPTIONS: TimelineOptions = { maxSamples: 240, intervalMs: 1_000 };

export function sampleOf(s: SentinelSnapshot): TimelineSample {
  return {
    t: s.now,
    verdict: s.verdict,
    findings: s.findings.map((f) => f.id),
    requests: s.requests,
    oracleBest: s.decisions.oracleBest,
    notOracleBest: s.decisions.notOracleBest,
    noPrefix: s.decisions.noPrefix,
    followups: s.decisions.followupTurns,
    sticky: s.decisions.stickyTurns,
    scoreTerms: s.decisions.scoreTerms,
    servers: s.servers.map((v) => ({
      server: v.server,
      requests: v.requests,
      promptTokens: v.promptTokens,
      cachedTokens: v.cachedTokens,
      oracleCachedTokens: v.oracleCachedTokens,
      predictedRouterCachedTokens: v.predictedRouterCachedTokens,
      ranks: v.ranks.map((r) => ({
        rank: r.rank,
        events: Object.values(r.eventsByType).reduce((a, b) => a + b, 0),
        gaps: r.gaps,
        resets: r.resets,
      })),
    })),
  };
}

export class Timeline {
  readonly #maxSamples: number;
  #intervalMs: number;
  #samples: TimelineSample[] = [];

  constructor(options: Partial<TimelineOptions> = {}) {
    const o = { ...DEFAULT_TIMELINE_OPTIONS, ...options };
    if (!(o.maxSamples >= 4) || !(o.intervalMs > 0))
      throw new KvsentinelError(
        'internal',
        `timeline: maxSamples ≥ 4 and intervalMs > 0 (got ${o.maxSamples}, ${o.intervalMs})`,
      );
    this.#maxSamples = Math.floor(o.maxSamples);
    this.#intervalMs = o.intervalMs;
  }

  get intervalMs(): number {
    return this.#intervalMs;
  }

  get samples(): readonly TimelineSample[] {
    return this.#samples;
  }

  /** Whether a sample at `now` is due (the caller then takes a snapshot and calls add). */
  due(now: number): boolean {
    const last = this.#samples.at(-1);
    return last === undefined || now - last.t >= this.#intervalMs;
  }

  /** Samples the snapshot when due; `snapshot` is only called then. */
  offer(now: number, snapshot: () => SentinelSnapshot): void {
    if (this.due(now)) this.add(sampleOf(snapshot()));
  }

  add(sample: TimelineSample): void {
    const last = this.#samples.at(-1);
    if (last !== undefined && sample.t < last.t) return; // time never runs back within one timeline
    if (last !== undefined && sample.t === last.t) this.#samples[this.#samples.length - 1] = sample;
    else this.#samples.push(sample);
    if (this.#samples.length > this.#maxSamples) {
      // keep the first, every other one, and the newest
      const newest = this.#samples.at(-1)!;
      this.#samples = this.#samples.filter((_, i) => i % 2 === 0);
      if (this.#samples.at(-1) !== newest) this.#samples.push(newest);
      this.#intervalMs *= 2;
    }
  }
}
