// Render parity over the evaluation window: how many CTX requests had their router-side ids compared with the
// worker's, how many differed, how many of those lost every router match (the difference in the first router
// block) or most of them, the causes, and one recent difference as evidence (positions and ids, never text).
import type { RenderCauseCount, RenderDiagnosis, RenderDriftSample } from '../diagnosis/rule.js';
import type { RenderCheckObservation } from '../observe/observation.js';
import { matchableShare, type RenderDriftCause, type RenderSide } from '../render/compare-renders.js';
import { WindowedCounters } from './windowed-counters.js';

const SAMPLES = 16;

export class RenderParity {
  readonly #win: WindowedCounters;
  readonly #samples: RenderDriftSample[] = [];

  constructor(windowMs: number | null) {
    this.#win = new WindowedCounters({ windowMs });
  }

  /** `tokensPerBlock`: the router's chunk size as the state knows it now */
  observe(obs: RenderCheckObservation, tokensPerBlock: number): void {
    const w = this.#win;
    w.add(obs.ts, 'cmp');
    if (obs.routerIds === 'tokenizer') w.add(obs.ts, 'rendered');
    const diff = obs.diff;
    if (diff === null) return;
    w.add(obs.ts, 'diff');
    w.add(obs.ts, `diff|${obs.server}`);
    const share = matchableShare(diff, tokensPerBlock);
    if (share < 0.5) w.add(obs.ts, 'break');
    if (share === 0) w.add(obs.ts, 'first');
    w.add(obs.ts, `cause|${diff.cause}|${diff.side ?? ''}`);
    w.max(obs.ts, 'minPosNeg', -diff.position);
    this.#samples.push({ ts: obs.ts, server: obs.server, diff });
    if (this.#samples.length > SAMPLES) this.#samples.shift();
  }

  diagnosis(now: number): RenderDiagnosis {
    const w = this.#win;
    const sum = (key: string): number => w.sum(key, now);
    const causes: RenderCauseCount[] = [];
    for (const key of w.keys('cause|', now)) {
      const [, cause, side] = key.split('|');
      causes.push({
        cause: cause as RenderDriftCause,
        side: side === '' ? null : (side as RenderSide),
        requests: sum(key),
      });
    }
    causes.sort((a, b) => b.requests - a.requests);
    const minNeg = w.maxOf('minPosNeg', now);
    const span = w.span(now);
    const recent = this.#samples.at(-1);
    return {
      compared: sum('cmp'),
      rendered: sum('rendered'),
      differing: sum('diff'),
      breaking: sum('break'),
      firstBlock: sum('first'),
      causes,
      differingServers: w.keys('diff|', now).map((k) => k.slice('diff|'.length)),
      minPosition: minNeg === null ? null : -minNeg,
      sample: recent !== undefined && (span === null || recent.ts >= span.from) ? recent : null,
    };
  }
}
