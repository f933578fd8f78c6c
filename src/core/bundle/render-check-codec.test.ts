// render-check observations in a bundle: positions and cause always, the id windows only with --include-prompts;
// a bad record names its field.
import { describe, expect, it } from 'vitest';
import { DOUBLED_BOS_DIFF } from '../../../test/helpers/render-diffs.js';
import type { RenderCheckObservation } from '../observe/observation.js';
import { decodeBundleRecord, encodeBundleRecord } from './bundle-codec.js';
import { KeyHistory } from './bundle-keys.js';

const check: RenderCheckObservation = {
  kind: 'render-check',
  ts: 1234,
  requestId: 'r1',
  server: 'ctx0',
  routerIds: 'tokenizer',
  promptTokens: 4001,
  diff: DOUBLED_BOS_DIFF,
};

function roundTrip(includePrompts: boolean): unknown {
  const line = encodeBundleRecord({ observation: check, digest: null }, new KeyHistory(), includePrompts);
  const decoded = decodeBundleRecord(line, 1, new KeyHistory());
  if (!decoded.ok) throw new Error(decoded.issue.message);
  return decoded.record.observation;
}

describe('render-check in bundles', () => {
  it('keeps positions and the cause, and the id windows only when prompts are included', () => {
    expect(roundTrip(true)).toEqual(check);
    expect(roundTrip(false)).toEqual({ ...check, diff: { ...check.diff!, routerWindow: [], workerWindow: [] } });
    const same = { ...check, diff: null };
    const line = encodeBundleRecord({ observation: same, digest: null }, new KeyHistory(), false);
    expect(decodeBundleRecord(line, 1, new KeyHistory())).toMatchObject({ ok: true, record: { observation: same } });
  });

  it('refuses an unknown cause or side, naming the field and the line', () => {
    const bad = JSON.stringify({ ...check, diff: { ...check.diff, cause: 'gremlins' } });
    expect(decodeBundleRecord(bad, 7, new KeyHistory())).toMatchObject({
      ok: false,
      issue: { code: 'bad-record', path: '$.diff.cause' },
    });
    const side = JSON.stringify({ ...check, diff: { ...check.diff, side: 'both' } });
    expect(decodeBundleRecord(side, 8, new KeyHistory())).toMatchObject({ ok: false, issue: { path: '$.diff.side' } });
    const ids = JSON.stringify({ ...check, diff: { ...check.diff, routerWindow: [0, -1] } });
    expect(decodeBundleRecord(ids, 9, new KeyHistory())).toMatchObject({
      ok: false,
      issue: { path: '$.diff.routerWindow[1]' },
    });
  });
});
