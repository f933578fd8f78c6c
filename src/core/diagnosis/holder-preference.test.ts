import { describe, expect, it } from 'vitest';
import { classifyPreference, preferenceExcess } from './holder-preference.js';

describe('classifyPreference', () => {
  it('away: the holder is busier than the least-loaded server, a load-only router never picks it', () => {
    expect(classifyPreference('ctx0', ['ctx0'], { ctx0: 9, ctx1: 0, ctx2: 0 }, 3)).toEqual({
      set: 'away',
      holderChosen: true,
      blindProbability: 1 / 3,
    });
    expect(classifyPreference('ctx1', ['ctx0'], { ctx0: 9, ctx1: 0, ctx2: 0 }, 3)).toMatchObject({
      set: 'away',
      holderChosen: false,
    });
  });
  it('tie: the holder is one of several least-loaded servers, load-only picks it with its share of the tie', () => {
    expect(classifyPreference('ctx1', ['ctx1'], { ctx0: 4, ctx1: 1, ctx2: 1 }, 3)).toEqual({
      set: 'tie',
      holderChosen: true,
      blindProbability: 0.5,
    });
  });
  it('uninformative: every least-loaded server holds the prefix, no holder, no load report, or every server holds it', () => {
    expect(classifyPreference('ctx1', ['ctx1'], { ctx0: 4, ctx1: 1, ctx2: 2 }, 3)).toBeNull();
    expect(classifyPreference('ctx1', [], { ctx0: 4, ctx1: 1, ctx2: 2 }, 3)).toBeNull();
    expect(classifyPreference('ctx1', ['ctx0'], null, 3)).toBeNull();
    expect(classifyPreference('ctx1', ['ctx0', 'ctx1', 'ctx2'], { ctx0: 4, ctx1: 1, ctx2: 2 }, 3)).toBeNull();
  });
  it('servers known but missing from the load report count as idle', () => {
    // ctx2 unreported → idle → the least-loaded set is {ctx2}; the holder ctx1 is away from it
    expect(classifyPreference('ctx1', ['ctx1'], { ctx0: 4, ctx1: 1 }, 3)).toMatchObject({
      set: 'away',
      holderChosen: true,
    });
  });
  it('preferenceExcess is the holder rate above the blind rate', () => {
    expect(preferenceExcess({ decisions: 100, holderChosen: 90, blindExpected: 33 })).toBeCloseTo(0.57);
    expect(preferenceExcess({ decisions: 0, holderChosen: 0, blindExpected: 0 })).toBe(0);
  });
});
