// A render difference tests share: the router's render starts with a second BOS the worker's ids do not have
// (4 001 ids against 4 000, equal again after position 1).
import type { RenderDiff } from '../../src/core/render/compare-renders.js';

export const DOUBLED_BOS_DIFF: RenderDiff = {
  position: 1,
  routerLength: 4001,
  workerLength: 4000,
  commonSuffix: 3999,
  routerSpan: 1,
  workerSpan: 0,
  windowFrom: 0,
  routerWindow: [0, 0, 3476, 477],
  workerWindow: [0, 3476, 477, 11502],
  cause: 'doubled-bos',
  side: 'router',
};
