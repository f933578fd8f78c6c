// One line of a bundle's observations.jsonl: an observation plus the digest computed at record time. Prompts never
// leave the process unless the bundle was recorded with --include-prompts: decisions carry their router-style and
// worker-style block keys (hashes, not token ids), stored blocks their token counts and hash-check results.
// Block hashes are strings (u64 as unsigned decimal, v2_sha256 as its 64-char hex), so plain JSON.parse is exact;
// key arrays are base64 of little-endian u64s, shared with the previous turn of the same trajectory where they agree.
import type { ObservationDigest } from '../state/observation-digester.js';
import type { Observation } from '../observe/observation.js';
import type { WireIssue } from '../wire/wire-issue.js';
import { encodeCheck, encodeEvent } from './bundle-events.js';
import { DecodeError, asObject, type Json, type JsonObject } from './bundle-fields.js';
import { encodeKeys, type KeyHistory } from './bundle-keys.js';
import { decodeObservation } from './bundle-observation.js';

export const BUNDLE_FORMAT = 'kvsentinel-bundle';
export const BUNDLE_VERSION = 1;

export interface BundleRecord {
  readonly observation: Observation;
  readonly digest: ObservationDigest | null;
}

/** Serializes one record to a JSON line (without the newline). */
export function encodeBundleRecord(record: BundleRecord, history: KeyHistory, includePrompts: boolean): string {
  const obs = record.observation;
  let out: JsonObject;
  if (obs.kind === 'worker-events') {
    out = {
      kind: obs.kind,
      ts: obs.ts,
      server: obs.server,
      firstSeq: obs.firstSeq,
      events: obs.events.map((e) => encodeEvent(e, includePrompts)),
    };
    if (obs.stream !== undefined) {
      const hashing = obs.stream.vllmHashing;
      out.stream = {
        engine: obs.stream.engine,
        hashes: obs.stream.hashes,
        ...(hashing !== undefined ? { vllmHashing: { algo: hashing.algo, seedKnown: hashing.seedKnown } } : {}),
      };
    }
    if (record.digest?.kind === 'worker-events') out.digest = { stored: record.digest.digest.stored.map(encodeCheck) };
  } else if (obs.kind === 'decision') {
    out = {
      kind: obs.kind,
      ts: obs.ts,
      requestId: obs.requestId,
      correlationId: obs.correlationId,
      server: obs.server,
      promptTokens: includePrompts && obs.promptTokens !== null ? Array.from(obs.promptTokens) : null,
      promptTokenCount: obs.promptTokenCount ?? obs.promptTokens?.length ?? null,
      inflight: obs.inflight === null ? null : { ...obs.inflight },
    };
    if (obs.promptBlocks !== undefined) out.promptBlocks = obs.promptBlocks;
    if (obs.promptForm !== undefined) out.promptForm = obs.promptForm;
    if (obs.promptTokensFrom !== undefined) out.promptTokensFrom = obs.promptTokensFrom;
    if (obs.unreadable !== undefined) out.unreadable = obs.unreadable;
    if (record.digest?.kind === 'decision')
      out.digest = { keys: encodeKeys(record.digest.keys, obs.correlationId, history) };
  } else if (obs.kind === 'outcome') {
    // the worker's prompt ids stay in the process unless prompts are included; their keys go as the digest
    const { workerPromptTokens, ...rest } = obs;
    out = JSON.parse(JSON.stringify(rest)) as JsonObject;
    if (includePrompts && workerPromptTokens !== undefined && workerPromptTokens !== null)
      out.workerPromptTokens = Array.from(workerPromptTokens);
    if (record.digest?.kind === 'outcome') out.digest = { keys: encodeKeys(record.digest.keys, null, history) };
  } else if (obs.kind === 'render-check' && obs.diff !== null && !includePrompts) {
    // positions and cause only: the id windows are prompt token ids
    out = JSON.parse(
      JSON.stringify({ ...obs, diff: { ...obs.diff, routerWindow: [], workerWindow: [] } }),
    ) as JsonObject;
  } else {
    out = JSON.parse(JSON.stringify(obs)) as JsonObject;
  }
  return JSON.stringify(out);
}

export type DecodeResult =
  { readonly ok: true; readonly record: BundleRecord } | { readonly ok: false; readonly issue: WireIssue };

/** Parses one line; a bad line is an issue naming the line and the field, never an exception. */
export function decodeBundleRecord(line: string, lineNumber: number, history: KeyHistory): DecodeResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (err) {
    return {
      ok: false,
      issue: {
        code: 'bad-json',
        message: `line ${lineNumber}: not JSON (${err instanceof Error ? err.message : String(err)})`,
        path: '$',
        offset: null,
      },
    };
  }
  try {
    return { ok: true, record: decodeObservation(asObject(parsed as Json, '$'), history) };
  } catch (err) {
    if (err instanceof DecodeError) {
      return {
        ok: false,
        issue: {
          code: 'bad-record',
          message: `line ${lineNumber}: ${err.path}: ${err.message}`,
          path: err.path,
          offset: null,
        },
      };
    }
    throw err;
  }
}
