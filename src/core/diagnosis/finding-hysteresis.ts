// Hysteresis for the daemon: a finding turns on after its rule held for `onAfter` consecutive evaluations and off
// after it failed for `offAfter` consecutive ones, so a finding does not flap at a threshold. While on, its
// evidence is the latest hit's (or the last one before the rule stopped holding). The one-shot audit uses
// onAfter = offAfter = 1.
import { FINDING_CATALOG, FINDING_IDS, type FindingId } from './finding-catalog.js';
import type { RuleHit } from './rule.js';
import type { Finding } from './finding.js';
import { KvsentinelError } from '../errors.js';

export interface HysteresisOptions {
  readonly onAfter: number;
  readonly offAfter: number;
}

interface Track {
  active: boolean;
  holding: number;
  failing: number;
  /** first evaluation of the current holding streak */
  streakStart: number;
  since: number;
  last: RuleHit | null;
}

export class FindingHysteresis {
  readonly #options: HysteresisOptions;
  readonly #tracks = new Map<FindingId, Track>();

  constructor(options: HysteresisOptions) {
    if (!(options.onAfter >= 1) || !(options.offAfter >= 1)) {
      throw new KvsentinelError(
        'internal',
        `hysteresis onAfter/offAfter must be ≥ 1, got ${options.onAfter}/${options.offAfter}`,
      );
    }
    this.#options = options;
  }

  /** Feeds one evaluation; returns the active findings in catalog order. */
  update(now: number, hits: ReadonlyMap<FindingId, RuleHit>): Finding[] {
    for (const id of FINDING_IDS) {
      const hit = hits.get(id);
      let track = this.#tracks.get(id);
      if (!track) {
        if (hit === undefined) continue;
        track = { active: false, holding: 0, failing: 0, streakStart: now, since: now, last: null };
        this.#tracks.set(id, track);
      }
      if (hit !== undefined) {
        if (track.holding === 0) track.streakStart = now;
        track.holding++;
        track.failing = 0;
        track.last = hit;
        if (!track.active && track.holding >= this.#options.onAfter) {
          track.active = true;
          track.since = track.streakStart;
        }
      } else {
        track.holding = 0;
        track.failing++;
        if (track.active && track.failing >= this.#options.offAfter) track.active = false;
        if (!track.active) this.#tracks.delete(id);
      }
    }
    const findings: Finding[] = [];
    for (const id of FINDING_IDS) {
      const track = this.#tracks.get(id);
      if (!track?.active || track.last === null) continue;
      findings.push({ id, severity: FINDING_CATALOG[id], since: track.since, ...track.last });
    }
    return findings;
  }
}
