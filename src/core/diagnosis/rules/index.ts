// Every rule, in catalog order. A new finding is one file plus one line here.
import type { Rule } from '../rule.js';
import { cacheSignalInert } from './cache-signal-inert.js';
import { eventQueueShared } from './event-queue-shared.js';
import { eventSignalMasked } from './event-signal-masked.js';
import { eventStreamReset } from './event-stream-reset.js';
import { eventsAbsent } from './events-absent.js';
import { eventsPartialRanks } from './events-partial-ranks.js';
import { evidenceInsufficient } from './evidence-insufficient.js';
import { hashMismatch } from './hash-mismatch.js';
import { hitRateBelowOracle } from './hit-rate-below-oracle.js';
import { loadConcentrated } from './load-concentrated.js';
import { loadTermDominates } from './load-term-dominates.js';
import { routerHashDivergence } from './router-hash-divergence.js';
import { routerNotPolling } from './router-not-polling.js';
import { renderDrift } from './render-drift.js';
import { routerTableEmpty } from './router-table-empty.js';
import { sidecarLagging } from './sidecar-lagging.js';
import { sourceUnreachable } from './source-unreachable.js';
import { tokensPerBlockMismatch } from './tokens-per-block-mismatch.js';
import { turnScatterHigh } from './turn-scatter-high.js';

export const RULES: readonly Rule[] = [
  eventsAbsent,
  eventQueueShared,
  routerNotPolling,
  eventsPartialRanks,
  eventStreamReset,
  hashMismatch,
  tokensPerBlockMismatch,
  routerHashDivergence,
  renderDrift,
  routerTableEmpty,
  cacheSignalInert,
  loadTermDominates,
  turnScatterHigh,
  hitRateBelowOracle,
  sourceUnreachable,
  loadConcentrated,
  evidenceInsufficient,
  eventSignalMasked,
  sidecarLagging,
];
