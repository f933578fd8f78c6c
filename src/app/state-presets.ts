// How each use case runs the state: the window its rules read, how often its driver evaluates them (the daemon's
// evaluation timer; a one-shot run evaluates once, at its end), and the hysteresis a finding needs to turn on and
// off. Defined once here; callers pick a preset by name.
import type { SentinelMode, SentinelOptions } from '../core/state/sentinel-state.js';
import type { ServeConfig } from './config/serve-config.js';

type Preset = Pick<SentinelOptions, 'windowMs' | 'hysteresis'> & {
  /** the daemon evaluates the rules this often, ms (reading a snapshot never does) */
  readonly evaluateEveryMs?: number;
};

export const STATE_PRESETS = {
  /**
   * `serve`: rules over the last 10 minutes, evaluated every second; a daemon should not flap, so a finding
   * needs two evaluations to turn on and five to turn off.
   */
  daemon: { windowMs: 10 * 60_000, evaluateEveryMs: 1_000, hysteresis: { onAfter: 2, offAfter: 5 } },
  /** `audit`, `record`, a live audit: counters since the start, one evaluation at the end, no hysteresis. */
  oneShot: { windowMs: null },
  /**
   * `demo`: one-shot (its report is what `audit` computes over the run, evaluated at its end), but its progress
   * line, landing page and live feed show findings as it runs, so its daemon evaluates once a second meanwhile.
   */
  demo: { windowMs: null, evaluateEveryMs: 1_000 },
  /**
   * A slower windowed variant: rules over the last 5 minutes, evaluated every 5 s, a finding on after 3
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
  const { windowMs, hysteresis } = STATE_PRESETS[preset] as Preset;
  return {
    windowMs: windowMs ?? null,
    ...(hysteresis !== undefined ? { hysteresis } : {}),
    mode: stateModeOf(config),
    limits: { tableBlocksPerServer: config.state.maxTableBlocks },
  };
}

/** The vantage point a recording of these sources states in its manifest (what a later audit of it assumes). */
export function recordingModeOf(config: ServeConfig): Extract<SentinelMode, 'exclusive' | 'relay' | 'watch'> {
  return config.ctx.some((c) => c.events === 'exclusive') ? 'exclusive' : config.relays.length > 0 ? 'relay' : 'watch';
}
