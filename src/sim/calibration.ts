// The rows of the bug report's table (docs/design.md §1) as settings over the seed preset, with their targets.
// `sim run --preset seed --set ...` with these settings reproduces each row.

export interface CalibrationRow {
  readonly id: string;
  readonly label: string;
  /** --set overrides on the seed preset (only what the row names) */
  readonly settings: readonly string[];
  /** target prefix-cache hit, percent; null = not a table row */
  readonly hit: number | null;
  /** target turn scatter, percent; null = not reported */
  readonly scatter: number | null;
}

export const CALIBRATION_ROWS: readonly CalibrationRow[] = [
  {
    id: 'defaults',
    label: 'kv_cache_aware, defaults (tokens_per_block 32, max_batch_size 64)',
    settings: [],
    hit: 89.6,
    scatter: 8.6,
  },
  {
    id: 'tpb128',
    label: 'same, router tokens_per_block 128',
    settings: ['router.tokens_per_block=128'],
    hit: 89.8,
    scatter: 8.6,
  },
  {
    id: 'backfill',
    label: '+ backfill_block_hashes_on_finish',
    settings: ['router.tokens_per_block=128', 'router.backfill_block_hashes_on_finish=true'],
    hit: 92.8,
    scatter: null,
  },
  {
    id: 'backfill-mbs512',
    label: '+ backfill + max_batch_size 512',
    settings: [
      'router.tokens_per_block=128',
      'router.backfill_block_hashes_on_finish=true',
      'router.max_batch_size=512',
    ],
    hit: 95.0,
    scatter: 3.2,
  },
  { id: 'conversation', label: 'conversation router', settings: ['router.type=conversation'], hit: 96, scatter: null },
  {
    id: 'healthy',
    label: 'kv_cache_aware with events on and block sizes aligned (prediction)',
    settings: ['ctx.event_buffer_max_size=10000', 'router.tokens_per_block=128'],
    hit: null,
    scatter: null,
  },
];

/** trajectories per row in the test suite (the preset runs 1536) */
export const CALIBRATION_TRAJECTORIES = 512;
