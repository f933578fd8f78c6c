// --tokenizer / tokenizer.path: a missing or malformed tokenizer is refused before anything starts, naming the file.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEEPSEEK_V3_DIR, deepseekVariant } from '../helpers/model-tokenizers.js';
import { runCli } from '../helpers/run-cli.js';

const relay = ['--relay', 'ctx0=http://127.0.0.1:1@127.0.0.1:0', '--web.listen-address', '127.0.0.1:0'];

describe('kvsentinel serve --tokenizer', () => {
  it('accepts the DeepSeek-V3 folder and its tokenizer.json (--config.check)', async () => {
    for (const path of [DEEPSEEK_V3_DIR, join(DEEPSEEK_V3_DIR, 'tokenizer.json')]) {
      const r = await runCli(['serve', ...relay, '--tokenizer', path, '--config.check']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    }
  });

  it('refuses a missing path, a folder without tokenizer.json, and malformed files, naming the file (exit 2)', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'kvs-tok-empty-'));
    const badJson = mkdtempSync(join(tmpdir(), 'kvs-tok-bad-'));
    writeFileSync(join(badJson, 'tokenizer.json'), '{"model": {"type": "BPE"');
    const badTemplate = deepseekVariant((config) => ({
      ...config,
      chat_template: '{% for m in messages %}{{ m.content }',
    }));
    const badConfig = deepseekVariant(() => ({ add_bos_token: 'yes' }));
    const cases: [string, RegExp][] = [
      ['/nonexistent/model', /--tokenizer: \/nonexistent\/model: no such file or folder/],
      [empty, new RegExp(`--tokenizer: ${join(empty, 'tokenizer.json')}: missing`)],
      [badJson, new RegExp(`--tokenizer: ${join(badJson, 'tokenizer.json')}: not JSON`)],
      [
        badTemplate,
        new RegExp(`--tokenizer: ${join(badTemplate, 'tokenizer_config.json')}: chat_template does not parse`),
      ],
      [
        badConfig,
        new RegExp(`--tokenizer: ${join(badConfig, 'tokenizer_config.json')}: add_bos_token: expected true or false`),
      ],
    ];
    for (const [path, message] of cases) {
      const r = await runCli(['serve', ...relay, '--tokenizer', path]);
      expect(r.stderr, path).toMatch(message);
      expect(r.code, path).toBe(4); // the file the flag names is invalid
    }
  });

  it('names the config key when the path comes from tokenizer.path', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kvs-tok-cfg-'));
    const file = join(dir, 'kvsentinel.yaml');
    writeFileSync(
      file,
      `relays: [{id: ctx0, upstream: "http://127.0.0.1:1", listen: "127.0.0.1:0"}]\ntokenizer: {path: ${join(dir, 'nope')}}\n`,
    );
    const r = await runCli(['serve', '--config', file, '--config.check']);
    expect(r.stderr).toMatch(/tokenizer\.path: .*nope: no such file or folder/);
    expect(r.code).toBe(4);
  });
});

describe('kvsentinel sim --set ctx.tokenizer / router.tokenizer', () => {
  it('sim serve refuses a bad folder before any port opens, naming the key and the file', async () => {
    const r = await runCli([
      'sim',
      'serve',
      '--preset',
      'healthy',
      '--set',
      'router.tokenizer=/nonexistent/tok',
      '--duration',
      '1s',
    ]);
    expect(r.stderr).toMatch(/--set router\.tokenizer=\/nonexistent\/tok: \/nonexistent\/tok: no such file or folder/);
    expect(r.code).toBe(4);
  });

  it('sim run (virtual time) says real tokenizers are live only', async () => {
    const r = await runCli(['sim', 'run', '--preset', 'healthy', '--set', `ctx.tokenizer=${DEEPSEEK_V3_DIR}`]);
    expect(r.stderr).toMatch(/ctx\.tokenizer=.*: real tokenizers run in the live simulator only/);
    expect(r.code).toBe(2);
  });
});
