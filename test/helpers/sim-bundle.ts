// A bundle recorded from a virtual-time simulator run (what `kvsentinel record` writes), for offline audits.
import { BundleWriter } from '../../src/outputs/bundle-writer.js';
import { runVirtual } from '../../src/sim/run-virtual.js';
import { presetConfig } from '../../src/sim/sim-config.js';
import { REDUCED_SCALE } from './fault-matrix-rows.js';

export async function writeSimBundle(
  dir: string,
  preset: 'seed' | 'healthy',
  set: readonly string[],
  options: { readonly includePrompts?: boolean } = {},
): Promise<number> {
  const writer = await BundleWriter.create(dir, {
    mode: 'relay',
    includePrompts: options.includePrompts === true,
    meta: { preset, set: set.join(' ') },
  });
  let observations = 0;
  runVirtual(presetConfig(preset, [...REDUCED_SCALE, ...set]), {
    tap: 'relay',
    onObservation: (obs) => {
      writer.write(obs);
      observations++;
    },
  });
  await writer.close();
  return observations;
}
