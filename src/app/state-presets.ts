// How each use case runs the state: the window its rules read, how often a snapshot re-evaluates them, and the
// hysteresis a finding needs to turn on and off. Defined once here; callers pick a preset by name.
import type { SentinelMode, SentinelOptions } from '../core/state/sentinel-state.js';
import type { ServeConfig } from './config/serve-config.js';

type Preset = Pick<SentinelOptions, 'windowMs' | 'evaluateEveryMs' | 'hysteresis'>;

export const STATE_PRESETS = {
  /**
   * `serve`: rules over the last 10 minutes, evaluated at most every second; a daemon should not flap, so a finding
   * needs two evaluations to turn on and five to turn off.
   */
  daemon: { windowMs: 10 * 60_000, evaluateEveryMs: 1_000, hysteresis: { onAfter: 2, offAfter: 5 } },
  /** `audit`, `record`, a live audit: counters since the start, every snapshot evaluates, no hysteresis. */
  oneShot: { windowMs: null },
  /**
   * `demo`: one-shot (its report is what `audit` computes over the run), but its progress line, landing page and
   * live feed read snapshots often, so evaluation is throttled to once a second.
   */
  demo: { windowMs: null, evaluateEveryMs: 1_000 },
  /**
   * A slower windowed variant: rules over the last 5 minutes, evaluated at most every 5 s, a finding on after 3
   * evaluations (15 s) and off after 12 (1 min). No command runs it; the verdict-over-time tests do.
   */
  fiveMinuteWindow: { windowMs: 300_000, evaluateEveryMs: 5_000, hysteresis: { onAfter: 3, offAfter: 12 } },
} as const satisfies Record<string, Preset>;

export type StatePresetName = keyof typeof STATE_PRESETS;

/** The vantage point the configured sources give: exclusive when a --ctx worker's events are drained by us. */
export function stateModeOf(config: ServeConfig): Extract<SentinelMode, 'exclusive' | 'auto'> {
  return config.ctx.some((c) => c.events === 'exclusive') ? 'exclusive' : 'auto';
}

/** A preset with the mode and table limits a configuration implies. */
export function stateOptionsFor(preset: StatePresetName, config: ServeConfig): SentinelOptions {
  return {
    ...STATE_PRESETS[preset],
    mode: stateModeOf(config),
    limits: { tableBlocksPerServer: config.state.maxTableBlocks },
  };
}

/** The vantage point a recording of these sources states in its manifest (what a later audit of it assumes). */
export function recordingModeOf(config: ServeConfig): Extract<SentinelMode, 'exclusive' | 'relay' | 'watch'> {
  return config.ctx.some((c) => c.events === 'exclusive') ? 'exclusive' : config.relays.length > 0 ? 'relay' : 'watch';
}
