// The simulator's orchestrator log against Python's own logging: the handler TensorRT-LLM's newest logger installs
// (Formatter "[%(asctime)s] %(message)s", datefmt "%m/%d/%Y-%H:%M:%S") fed the message its log() builds (the parts
// "[TRT-LLM]", tag, "[serve   ]" and every argument of the call, joined by single spaces). kvsentinel then reads
// every line the simulator wrote for a newest-router run back into the facts the router logged.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseOrchestratorLogLine } from '../../src/core/watch/orchestrator-log.js';
import { createServerResolver } from '../../src/core/watch/server-resolver.js';
import { orchestratorLine, VIRTUAL_EPOCH_MS } from '../../src/sim/log-lines.js';
import { presetConfig } from '../../src/sim/sim-config.js';
import { runVirtual } from '../../src/sim/run-virtual.js';

const PY = String.raw`
import json, logging, sys
calls = json.loads(sys.stdin.read())
handler = logging.StreamHandler(sys.stdout)
handler.setFormatter(logging.Formatter(fmt="[%(asctime)s] %(message)s", datefmt="%m/%d/%Y-%H:%M:%S"))
log = logging.getLogger("TRT-LLM")
log.addHandler(handler)
log.setLevel(logging.INFO)
log.propagate = False
levels = {"I": logging.INFO, "W": logging.WARNING, "E": logging.ERROR}
for c in calls:
    parts = ["[TRT-LLM]", "[" + c["level"] + "]", "[serve   ]"] + [str(a) for a in [c["message"], *c["args"]]]
    record = log.makeRecord("TRT-LLM", levels[c["level"]], "router.py", 1, " ".join(parts), None, None)
    record.created = c["ts"] / 1000
    log.handle(record)
`;

const CALLS = [
  { ts: 0, level: 'I', message: "router tokens_per_block unset: adopting worker's %d on %s", args: [128, 'ctx0'] },
  {
    ts: 61_000,
    level: 'W',
    message:
      'tokens_per_block mismatch on %s: router=%d worker=%d. KV events from worker cannot align with router block hashes; skipping event polling and relying on routed-block tracking for hit rate.',
    args: ['ctx1', 32, 128],
  },
  { ts: 3_601_500, level: 'W', message: 'Failed to poll KV cache events from ctx0: ', args: [] },
] as const;

describe("the simulator's orchestrator log is the newest TensorRT-LLM logger's", () => {
  it('prints each call exactly as Python logging does with the logger’s handler', () => {
    const py = spawnSync('python3', ['-c', PY], {
      input: JSON.stringify(CALLS.map((c) => ({ ...c, ts: VIRTUAL_EPOCH_MS + c.ts }))),
      env: { ...process.env, TZ: 'UTC' },
      encoding: 'utf8',
    });
    expect(py.status, py.stderr).toBe(0);
    const ours = CALLS.map((c) => orchestratorLine(c.ts, c.level, c.message, c.args));
    expect(ours).toEqual(py.stdout.split('\n').slice(0, -1));
  });

  it("reads a newest-router run's own log back: adoption, the skipped server, no server invented", () => {
    const lines: string[] = [];
    const config = presetConfig('healthy', [
      'router.profile=newest',
      'router.tokens_per_block=32',
      'ctx.servers=2',
      'workload.trajectories=4',
    ]);
    runVirtual(config, { orchestratorLog: (l) => lines.push(l) });
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines)
      expect(l).toMatch(/^\[\d{2}\/\d{2}\/\d{4}-\d{2}:\d{2}:\d{2}\] \[TRT-LLM\] \[[IWE]\] \[serve {3}\] /);
    const resolve = createServerResolver({ ctx0: [], ctx1: [] });
    const obs = lines.flatMap((l) => parseOrchestratorLogLine(l, 0, resolve));
    const skipped = obs.filter((o) => o.kind === 'router-server-fact');
    expect(skipped.map((o) => o.server).sort()).toEqual(['ctx0', 'ctx1']);
    const named = obs.flatMap((o) => ('server' in o ? [o.server] : []));
    expect(new Set(named)).toEqual(new Set(['ctx0', 'ctx1']));
  });
});
