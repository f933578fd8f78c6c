// A finding's evidence as people read it in the HTML and text reports: labels in words instead of the JSON keys
// (`audit --json` keeps the keys, a stable contract), shares and ratios as percentages, milliseconds as durations.
// Keys without a label of their own read as their words (`router_polls` → "router polls"), so a new rule's
// evidence is never shown as snake_case.
import { formatElapsed } from './time-text.js';

const LABELS: Readonly<Record<string, string>> = {
  requests: 'requests',
  drains: 'drains of /kv_cache_events',
  empty_drains: 'drains that came back []',
  router_polls: "router's event polls",
  router_polls_all_empty: 'every router poll answered []',
  router_polls_since_start: "router's event polls since start",
  events: 'KV events in the window',
  events_since_start: 'KV events since start',
  requests_per_second_per_server: 'requests per second per server',
  decisions: 'routing decisions',
  decisions_with_keys: 'decisions with hashed prompts',
  decisions_with_inflight: 'decisions with in-flight counts',
  followup_turns: 'follow-up turns',
  missing: 'kinds of evidence missing',
  router_profile: 'router version',
  router_tokens_per_block: "router's tokens_per_block",
  router_tokens_per_block_from: "router's tokens_per_block from",
  worker_block_size: "workers' block size",
  worker_block_size_from: "workers' block size from",
  worker_tokens_per_block: "workers' tokens_per_block",
  predicted_match_share: 'decisions the router predicted a match for',
  oracle_best_rate: 'decisions sent to the server holding the longest prefix',
  oracle_best_by_chance: 'the same by chance',
  oracle_hit_ratio: 'oracle hit ratio',
  realised_hit_ratio: 'realised hit ratio',
  tokens_lost: 'prompt tokens recomputed that the oracle had cached',
  tokens_lost_per_second: 'prompt tokens lost per second',
  turn_scatter_ratio: 'turn scatter',
  avoidable_scatter_ratio: 'avoidable turn scatter',
  scattered_turns: 'scattered follow-up turns',
  max_batch_size: 'max_batch_size',
  max_batch_size_from: 'max_batch_size from',
  top_server: 'busiest server',
  top_server_share: "busiest server's share of requests",
  down_for_ms: 'down for',
  failures: 'failed reads in a row',
  sources: 'sources',
  errors: 'errors',
  stream_events: 'events on the ZMQ stream',
  pull_events: 'events from /kv_cache_events',
  missed_events: 'events missed (event_id gaps)',
  router_fills_own_table: 'router fills its own table',
  event_path: 'event path',
  hash_mismatches: 'stored blocks whose hash does not recompute',
  stored_blocks: 'stored blocks',
};

/** words for an evidence key */
export function evidenceLabel(key: string): string {
  const known = LABELS[key];
  if (known !== undefined) return known;
  return key
    .replace(/_ms$/, '')
    .replace(/_(share|ratio)$/, ' $1')
    .replace(/_/g, ' ')
    .trim();
}

/** the value as the label reads it: a share as a percentage, milliseconds as a duration, counts grouped */
export function evidenceValueText(key: string, value: number | string | boolean): string {
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'string') return value;
  if (key.endsWith('_ms')) return formatElapsed(value);
  if (/(_share|_ratio|_rate|_by_chance)$/.test(key) && value >= 0 && value <= 1) return `${(value * 100).toFixed(1)}%`;
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  return String(Math.round(value * 10_000) / 10_000);
}
