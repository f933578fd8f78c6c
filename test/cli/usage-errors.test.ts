// Usage errors as a new user meets them: exit 2, one line (the last, or the only one) that names the problem and
// points at --help instead of printing the whole help; file errors in words; defaults that are durations written
// as durations.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { cleanupsAfterEach } from '../helpers/test-resources.js';

const cleanups = cleanupsAfterEach();

function oneLine(stderr: string): string {
  const lines = stderr.trimEnd().split('\n');
  expect(lines, stderr).toHaveLength(1);
  return lines[0]!;
}

describe('usage errors', () => {
  it('unknown commands, subcommands and options: exit 2, one line pointing at --help', async () => {
    const cases: [string[], RegExp][] = [
      [['bogus'], /^kvsentinel: unknown command 'bogus' \(see 'kvsentinel --help'\)$/],
      [['sim', 'bogus'], /^kvsentinel sim: unknown command 'bogus' \(see 'kvsentinel sim --help'\)$/],
      [['serve', '--bogus'], /^kvsentinel serve: unknown option '--bogus' \(see 'kvsentinel serve --help'\)$/],
      [
        ['audit', '--fail-on', 'fatal'],
        /^kvsentinel audit: option '--fail-on <severity>' argument 'fatal' is invalid.*\(see 'kvsentinel audit --help'\)$/,
      ],
      [['tail'], /^kvsentinel tail: missing required argument 'url' \(see 'kvsentinel tail --help'\)$/],
    ];
    for (const [args, expected] of cases) {
      const run = await runCli(args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(oneLine(run.stderr)).toMatch(expected);
      expect(run.stdout).toBe('');
    }
  });

  it("the command's own checks name the command in one line", async () => {
    const run = await runCli(['demo', '--duration', 'soon']);
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toBe(
      "kvsentinel demo: --duration: 'soon' is not a positive duration (e.g. 250ms, 5s, 1m) (see 'kvsentinel demo --help')",
    );
    // a bare number could be seconds or milliseconds: the message says how to write it, and nothing about ms
    const bare = await runCli(['audit', '--ctx', 'ctx0=http://127.0.0.1:9', '--duration', '30']);
    expect(bare.code).toBe(2);
    expect(oneLine(bare.stderr)).toBe(
      "kvsentinel audit: --duration: '30' has no unit: write 30s, 30m or 30ms (see 'kvsentinel audit --help')",
    );
    const listen = await runCli(['demo', '--web.listen-address', '9464']);
    expect(listen.code).toBe(2);
    expect(oneLine(listen.stderr)).toBe(
      "kvsentinel demo: --web.listen-address: '9464' is not HOST:PORT (see 'kvsentinel demo --help')",
    );
    const engine = await runCli(['demo', '--engine', 'tgi']);
    expect(engine.code).toBe(2);
    expect(oneLine(engine.stderr)).toBe(
      "kvsentinel demo: --engine 'tgi': expected trtllm or vllm (see 'kvsentinel demo --help')",
    );
    const zmq = await runCli(['audit', '--zmq', 'ctx0=tcp://*:5557', '--duration', '1s']);
    expect(zmq.code).toBe(2);
    expect(oneLine(zmq.stderr)).toMatch(
      /^kvsentinel audit: --zmq 'ctx0=tcp:\/\/\*:5557' endpoint: '.*': \* is the publisher's bind address; give the worker's host/,
    );
  });

  it('--time-scale: sim serve and demo read it with one parser and refuse the same values in the same words', async () => {
    for (const value of ['0', '-2', 'fast', ' ']) {
      const [serve, demo] = await Promise.all([
        runCli(['sim', 'serve', '--time-scale', value]),
        runCli(['demo', '--time-scale', value]),
      ]);
      const message = `--time-scale ${value}: expected a positive number (virtual seconds per real second)`;
      expect(serve.code, value).toBe(2);
      expect(demo.code, value).toBe(2);
      // sim serve reads it while commander parses (before its action names the command), demo in its action
      expect(oneLine(serve.stderr)).toBe(`kvsentinel: ${message} (see 'kvsentinel --help')`);
      expect(oneLine(demo.stderr)).toBe(`kvsentinel demo: ${message} (see 'kvsentinel demo --help')`);
    }
  });

  it('--set: sim run, sim serve and demo read it with one parser and refuse a bad value in the same words', async () => {
    for (const set of ['ctx.servers=0', 'router.type=magic', 'ctx.restart_at=5', 'bogus.key=1']) {
      const runs = await Promise.all(
        [['sim', 'run'], ['sim', 'serve'], ['demo']].map(async (command) => ({
          command: command.join(' '),
          run: await runCli([...command, '--set', set]),
        })),
      );
      const messages = runs.map(({ command, run }) => {
        expect(run.code, `${command} --set ${set}`).toBe(2);
        const line = oneLine(run.stderr);
        const prefix = `kvsentinel ${command}: `;
        const suffix = ` (see 'kvsentinel ${command} --help')`;
        expect(line.startsWith(prefix) && line.endsWith(suffix), line).toBe(true);
        return line.slice(prefix.length, line.length - suffix.length);
      });
      expect(messages[0]!.startsWith(`--set ${set.split('=')[0]}`), messages[0]).toBe(true);
      expect(new Set(messages).size, messages.join(' | ')).toBe(1);
    }
  });

  it('--config.check with no source says what serve would say', async () => {
    const check = await runCli(['serve', '--config.check']);
    const serve = await runCli(['serve']);
    expect(check.code).toBe(2);
    expect(serve.code).toBe(2);
    expect(oneLine(check.stderr)).toBe(oneLine(serve.stderr));
    expect(check.stderr).toContain('no source configured');
    expect(check.stdout).not.toContain('valid');
  });

  it('file errors in words; a missing bundle directory named as such; an unknown config key with file, path and did-you-mean', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kvs-usage-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const missingConfig = await runCli(['serve', '--config.file', join(dir, 'nope.yaml')]);
    expect(missingConfig.code).toBe(4); // an invalid input file, not the command line
    expect(oneLine(missingConfig.stderr)).toBe(
      `kvsentinel serve: --config.file ${join(dir, 'nope.yaml')}: cannot read it: no such file or directory (see 'kvsentinel serve --help')`,
    );
    const missingBundle = await runCli(['audit', '--bundle', join(dir, 'rec')]);
    expect(missingBundle.code).toBe(4);
    expect(oneLine(missingBundle.stderr)).toMatch(
      new RegExp(`^kvsentinel audit: --bundle ${join(dir, 'rec')}: no such directory`),
    );
    const file = join(dir, 'kvsentinel.yaml');
    await writeFile(
      file,
      'relays:\n  - {id: ctx0, upstream: "http://127.0.0.1:8001", listen: 9401}\nrelay:\n  drain_intervall: 1s\n',
    );
    const typo = await runCli(['serve', '--config.file', file, '--config.check']);
    expect(typo.code).toBe(4);
    expect(oneLine(typo.stderr)).toContain(
      `${file}: relay.drain_intervall: unknown key (did you mean drain_interval?)`,
    );
    const simTypo = await runCli(['sim', 'run', '--set', 'ctx.event_bufer_max_size=1']);
    expect(simTypo.code).toBe(2);
    expect(oneLine(simTypo.stderr)).toBe(
      "kvsentinel sim run: --set ctx.event_bufer_max_size: unknown key (did you mean ctx.event_buffer_max_size?); `kvsentinel sim keys` lists every key (see 'kvsentinel sim run --help')",
    );
  });

  it('every duration option shows its default as a duration, not as milliseconds', async () => {
    for (const args of [['demo'], ['audit'], ['record'], ['serve'], ['sim', 'serve']]) {
      const help = (await runCli([...args, '--help'])).stdout.replace(/\n\s+/g, ' ');
      for (const m of help.matchAll(/--[\w.-]+ <duration>[^()]*\(default: "?([^)"]+)"?\)/g))
        expect(m[1], `${args.join(' ')}: ${m[0]}`).toMatch(/^\d+(ms|s|m|h)$/);
    }
    const simServe = (await runCli(['sim', 'serve', '--help'])).stdout.replace(/\n\s+/g, ' ');
    expect(simServe).toMatch(/--ctx-wait <duration> [^(]*\(default: 2m\)/);
  });

  it('sim keys lists every --set key with its preset values, and demo --set points at it', async () => {
    const keys = await runCli(['sim', 'keys']);
    expect(keys.code).toBe(0);
    expect(keys.stdout).toMatch(
      /^ctx\.event_buffer_max_size\s+0\s+10000\s+KV event buffer per rank; 0 = events off \(fault\)$/m,
    );
    expect(keys.stdout).toMatch(/^router\.tokens_per_block\s+32\s+128\s/m);
    const json = (await runCli(['sim', 'keys', '--json'])).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { key: string });
    expect(json.length).toBeGreaterThan(40);
    const demoHelp = (await runCli(['demo', '--help'])).stdout.replace(/\n\s+/g, ' ');
    expect(demoHelp).toContain('`kvsentinel sim keys` lists every key');
  });
});
