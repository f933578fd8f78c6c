// "Evidence agrees with its own sentence": where a finding's summary states a count that its evidence also carries
// (requests, router polls, drains, routing decisions), the two are the same number; and a summary that says every
// drain came back [] never stands beside `drains: 0` (the relay records only drains that return events).
import { expect } from 'vitest';
import type { Finding } from '../../src/core/diagnosis/finding.js';

const STATED: readonly { readonly pattern: RegExp; readonly key: string }[] = [
  { pattern: /\bserved (\d+) requests\b/g, key: 'requests' },
  { pattern: /\b(\d+) router polls\b/g, key: 'router_polls' },
  { pattern: /\ball (\d+) drains\b/g, key: 'drains' },
  { pattern: /\bonly (\d+) routing decisions\b/g, key: 'decisions' },
];

export function expectEvidenceAgreesWithSummary(f: Pick<Finding, 'id' | 'summary' | 'evidence'>): void {
  for (const { pattern, key } of STATED) {
    const value = f.evidence[key];
    if (typeof value !== 'number') continue;
    const said = [...f.summary.matchAll(pattern)].map((m) => Number(m[1]));
    // a merged finding (several causes) may state one count per cause: the evidence holds their sum or one of them
    if (said.length === 1) expect(value, `${f.id}: ${key} in "${f.summary}"`).toBe(said[0]);
    else if (said.length > 1)
      expect(
        said.includes(value) || said.reduce((a, b) => a + b, 0) === value,
        `${f.id}: ${key} ${value} in "${f.summary}"`,
      ).toBe(true);
  }
  if (/every drain came back \[\]/.test(f.summary))
    expect(f.evidence['drains'], `${f.id}: "every drain came back []" next to drains 0`).not.toBe(0);
}
