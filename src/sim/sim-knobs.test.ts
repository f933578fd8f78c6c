// The knob tables are the simulator's one config representation: every preset field is a knob of its section (the
// workload's vocabulary size aside), every key names its section, and --set reads each kind with one parser.
import { describe, expect, it } from 'vitest';
import { KNOBS } from './sim-knobs.js';
import { applyOverrides, PRESETS, SEED_PRESET, SimConfigError } from './sim-config.js';

describe('sim knobs', () => {
  it('every preset field is a knob of its section and every key is section.name', () => {
    const bySection = new Map<string, Set<string>>();
    for (const [key, knob] of Object.entries(KNOBS)) {
      expect(key.startsWith(`${knob.section}.`), key).toBe(true);
      bySection.set(knob.section, (bySection.get(knob.section) ?? new Set()).add(knob.field));
    }
    for (const preset of Object.values(PRESETS)) {
      for (const section of ['workload', 'ctx', 'router', 'gen'] as const) {
        const fields = Object.keys(preset[section]).filter((f) => !(section === 'workload' && f === 'vocabSize'));
        for (const field of fields) expect(bySection.get(section)?.has(field), `${section}.${field}`).toBe(true);
      }
    }
  });

  it('--set writes the field its key names, read by its kind', () => {
    const config = applyOverrides(SEED_PRESET, [
      'workload.tool_latency=2s',
      'ctx.restart_at=never',
      'ctx.competitor_pump_from=1500ms',
      'router.profile=newest',
      'router.load_weight=0.5',
      'ctx.kv_events_push=true',
      'router.tokenizer=none',
    ]);
    expect(config.workload.toolLatencyMs).toBe(2000);
    expect(config.ctx.restartAtMs).toBeNull();
    expect(config.ctx.competitorPumpFromMs).toBe(1500);
    expect(config.router.profile).toBe('newest');
    expect(config.router.loadWeight).toBe(0.5);
    expect(config.ctx.kvEventsPush).toBe(true);
    expect(config.router.tokenizer).toBeNull();
    // the preset itself is untouched
    expect(SEED_PRESET.router.profile).toBeUndefined();
  });

  it('a bad value names the key and what its kind expects', () => {
    const cases: [string, string][] = [
      ['ctx.servers=0', '--set ctx.servers=0: expected a positive integer'],
      ['ctx.host_blocks=-1', '--set ctx.host_blocks=-1: expected a non-negative integer'],
      ['gen.ms_per_token=x', '--set gen.ms_per_token=x: expected a non-negative number'],
      ['router.poll_on_finish=no', '--set router.poll_on_finish=no: expected true or false'],
      ['ctx.overhead=150', "--set ctx.overhead=150: '150' has no unit: write 150s or 150ms (docs/units.md)"],
      ['router.ctx_body=xml', '--set router.ctx_body=xml: expected one of json, msgpack'],
      ['ctx.tokenizer=', '--set ctx.tokenizer=: expected a path (or none)'],
    ];
    for (const [set, message] of cases) {
      expect(() => applyOverrides(SEED_PRESET, [set]), set).toThrow(SimConfigError);
      expect(() => applyOverrides(SEED_PRESET, [set]), set).toThrow(message);
    }
  });
});
