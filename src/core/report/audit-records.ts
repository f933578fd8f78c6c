// Runs a one-shot audit over a stream of recorded observations (a bundle, or anything producing BundleRecords):
// one state, every record applied in order, one evaluation at the end.
import type { BundleRecord } from '../bundle/bundle-codec.js';
import { sampleOf, type Timeline } from './timeline.js';
import { createSentinelState, type SentinelOptions, type SentinelStateSnapshot } from '../state/sentinel-state.js';
import type { DiagnosisInput } from '../diagnosis/rule.js';

export interface AuditRecordsOptions extends SentinelOptions {
  /** called every `progressEvery` records with the count so far and the latest observation time */
  readonly onProgress?: (records: number, ts: number) => void;
  readonly progressEvery?: number;
  /** sampled by observation time while the records are applied, and once at the end (the HTML report's plots) */
  readonly timeline?: Timeline;
}

export interface AuditRecordsResult {
  readonly snapshot: SentinelStateSnapshot;
  readonly records: number;
  /** what the rules read at the end (the report's inferred configuration) */
  readonly input: DiagnosisInput;
}

export async function auditRecords(
  records: AsyncIterable<BundleRecord> | Iterable<BundleRecord>,
  options: AuditRecordsOptions = {},
): Promise<AuditRecordsResult> {
  const state = createSentinelState(options);
  const every = options.progressEvery ?? 50_000;
  let count = 0;
  let lastTs = 0;
  for await (const record of records) {
    state.apply(record.observation, record.digest);
    count++;
    if (record.observation.ts > lastTs) lastTs = record.observation.ts;
    options.timeline?.offer(lastTs, () => state.rulesAt(lastTs));
    if (options.onProgress !== undefined && count % every === 0) options.onProgress(count, lastTs);
  }
  const snapshot = state.evaluate(lastTs);
  options.timeline?.add(sampleOf(snapshot));
  return { snapshot, records: count, input: state.diagnosisInput(lastTs) };
}
