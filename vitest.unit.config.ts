// `npm run test:unit`: the fast suite. In-process tests only: the colocated unit tests under src/, the pure parts of
// test/ (hash vectors, the relay and event-buffer schedule properties, the state's fault tests, the virtual-time
// fault matrix). No Prometheus/promtool/alertmanager, no browser, no Python, no CLI child processes, no live
// simulated clusters: those run in the full `npm test`, which CI runs.
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  test: {
    ...base.test,
    include: [
      'src/**/*.test.ts',
      'test/core/hash-vectors.test.ts',
      'test/core/wasm-kernel-sources.test.ts',
      'test/cli/parse-u64.test.ts',
      'test/reliability/event-buffer-model.test.ts',
      'test/reliability/relay-path-schedules.test.ts',
      'test/reliability/ctx-exchange-schedules.test.ts',
      'test/reliability/state-faults.test.ts',
      'test/sim/sim-faults.test.ts',
      'test/integration/decision-gate.test.ts',
      'test/integration/fault-matrix.test.ts',
      'test/integration/verdict-windows.test.ts',
    ],
  },
});
