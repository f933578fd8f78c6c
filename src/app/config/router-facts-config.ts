// `router:` in the configuration (and --router.profile / --router.tokens-per-block): facts about the router an
// operator can state when no orchestrator log or debug endpoint says them (docs/design.md §5). Stated facts are
// applied as a router-config observation from source 'config'; a log line read later overrides them.
import { ROUTER_PROFILES, type RouterProfile } from '../../core/observe/observation.js';

export interface RouterFacts {
  readonly profile: RouterProfile | null;
  readonly tokensPerBlock: number | null;
  readonly maxBatchSize: number | null;
  readonly loadWeight: number | null;
  readonly trackRoutedBlocks: boolean | null;
  readonly backfillBlockHashesOnFinish: boolean | null;
}

export const ROUTER_FACT_KEYS = ['profile', 'tokens_per_block', 'max_batch_size', 'load_weight', 'track_routed_blocks', 'backfill_block_hashes_on_finish'] as const;

export interface RouterFactFlags {
  readonly routerProfile?: string;
  readonly routerTokensPerBlock?: string;
}

type Fail = (where: string, message: string) => never;

function profileOf(where: string, v: unknown, fail: Fail): RouterProfile {
  if (typeof v === 'string' && (ROUTER_PROFILES as readonly string[]).includes(v)) return v as RouterProfile;
  return fail(where, `${JSON.stringify(v)} is not one of ${ROUTER_PROFILES.join(', ')}`);
}

function positiveInt(where: string, v: unknown, fail: Fail): number {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n === 'number' && Number.isSafeInteger(n) && n > 0) return n;
  return fail(where, `${JSON.stringify(v)} is not a positive integer`);
}

function bool(where: string, v: unknown, fail: Fail): boolean {
  if (typeof v === 'boolean') return v;
  return fail(where, `${JSON.stringify(v)} is not true or false`);
}

/** `raw` is the `router:` mapping (already checked to be one, keys checked against ROUTER_FACT_KEYS). */
export function parseRouterFacts(raw: Readonly<Record<string, unknown>>, flags: RouterFactFlags, at: (key: string) => string, fail: Fail): RouterFacts {
  const get = <T>(key: (typeof ROUTER_FACT_KEYS)[number], parse: (where: string, v: unknown, fail: Fail) => T): T | null =>
    raw[key] === undefined || raw[key] === null ? null : parse(at(`router.${key}`), raw[key], fail);
  const loadWeight = get('load_weight', (where, v) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : fail(where, `${JSON.stringify(v)} is not a non-negative number`)));
  return {
    profile: flags.routerProfile !== undefined ? profileOf('--router.profile', flags.routerProfile, fail) : get('profile', profileOf),
    tokensPerBlock: flags.routerTokensPerBlock !== undefined ? positiveInt('--router.tokens-per-block', flags.routerTokensPerBlock, fail) : get('tokens_per_block', positiveInt),
    maxBatchSize: get('max_batch_size', positiveInt),
    loadWeight,
    trackRoutedBlocks: get('track_routed_blocks', bool),
    backfillBlockHashesOnFinish: get('backfill_block_hashes_on_finish', bool),
  };
}

export function statesAnything(facts: RouterFacts): boolean {
  return Object.values(facts).some((v) => v !== null);
}
