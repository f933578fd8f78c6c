// DIR/manifest.json of a bundle written by `kvsentinel record` (or the simulator's recorder) and read by
// `kvsentinel audit --bundle DIR`. Observations are in DIR/observations.jsonl (see bundle-codec.ts).
import type { SentinelMode } from '../state/sentinel-state.js';
import { BUNDLE_FORMAT, BUNDLE_VERSION } from './bundle-codec.js';

export const MANIFEST_FILE = 'manifest.json';
export const OBSERVATIONS_FILE = 'observations.jsonl';

export interface BundleManifest {
  readonly format: typeof BUNDLE_FORMAT;
  readonly version: number;
  readonly kvsentinel_version: string;
  readonly created_at: string;
  /** the vantage point the observations came from */
  readonly mode: SentinelMode;
  /** true only with --include-prompts: observations then carry prompt token ids */
  readonly include_prompts: boolean;
  /** size of the per-trajectory key history the writer used for prefix sharing (the reader must match it) */
  readonly key_history: number;
  /** false while recording (or if the recorder died): the observation count is then unknown */
  readonly complete: boolean;
  readonly observations: number | null;
  readonly first_ts: number | null;
  readonly last_ts: number | null;
  readonly kinds: Readonly<Record<string, number>>;
  /** free-form provenance: sources, simulator preset and faults, … */
  readonly meta: Readonly<Record<string, string>>;
}

export type ManifestResult =
  { readonly ok: true; readonly manifest: BundleManifest } | { readonly ok: false; readonly message: string };

const MODES: readonly string[] = ['relay', 'watch', 'exclusive', 'auto'];

/** Validates a parsed manifest.json. */
export function parseBundleManifest(value: unknown): ManifestResult {
  const fail = (message: string): ManifestResult => ({ ok: false, message });
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return fail('manifest.json is not a JSON object');
  const m = value as Record<string, unknown>;
  if (m.format !== BUNDLE_FORMAT)
    return fail(`manifest.json: format is ${JSON.stringify(m.format)}, expected "${BUNDLE_FORMAT}"`);
  if (typeof m.version !== 'number' || m.version > BUNDLE_VERSION) {
    return fail(
      `manifest.json: version ${JSON.stringify(m.version)} is not supported (this kvsentinel reads up to ${BUNDLE_VERSION})`,
    );
  }
  if (typeof m.mode !== 'string' || !MODES.includes(m.mode))
    return fail(`manifest.json: mode ${JSON.stringify(m.mode)} is not one of ${MODES.join(', ')}`);
  if (typeof m.key_history !== 'number' || !Number.isInteger(m.key_history) || m.key_history < 1)
    return fail('manifest.json: key_history must be a positive integer');
  const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return {
    ok: true,
    manifest: {
      format: BUNDLE_FORMAT,
      version: m.version,
      kvsentinel_version: typeof m.kvsentinel_version === 'string' ? m.kvsentinel_version : 'unknown',
      created_at: typeof m.created_at === 'string' ? m.created_at : 'unknown',
      mode: m.mode as SentinelMode,
      include_prompts: m.include_prompts === true,
      key_history: m.key_history,
      complete: m.complete === true,
      observations: num(m.observations),
      first_ts: num(m.first_ts),
      last_ts: num(m.last_ts),
      kinds: typeof m.kinds === 'object' && m.kinds !== null ? (m.kinds as Record<string, number>) : {},
      meta: typeof m.meta === 'object' && m.meta !== null ? (m.meta as Record<string, string>) : {},
    },
  };
}
