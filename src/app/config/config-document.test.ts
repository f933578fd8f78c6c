import { describe, expect, it } from 'vitest';
import { parseConfigDocument } from './config-document.js';
import { parseDuration } from './serve-config.js';

describe('config document', () => {
  it('reads YAML, and JSON files strictly', () => {
    expect(parseConfigDocument('k.yaml', 'relays: [{id: ctx0, upstream: "http://w:8001", listen: 9401}]')).toEqual({
      relays: [{ id: 'ctx0', upstream: 'http://w:8001', listen: 9401 }],
    });
    expect(parseConfigDocument('k.json', '{"poll_interval": "1s"}')).toEqual({ poll_interval: '1s' });
  });

  it('refuses a .json file that only YAML would read, naming line and column', () => {
    // YAML reads a trailing comma and a comment; a file that says it is JSON must be JSON
    expect(() =>
      parseConfigDocument(
        'k.json',
        '{\n  "relays": [{"id": "ctx0", "upstream": "http://w:8001", "listen": 9401}],\n}\n',
      ),
    ).toThrow(/^k\.json: line 3, column 1: not valid JSON: .+ \(line 3 reads '}'\)$/);
    expect(() => parseConfigDocument('k.JSON', '# comment\n{}')).toThrow(/^k\.JSON: line 1, column 1: not valid JSON/);
  });

  it('says what is wrong with a YAML file and where, on one line, nothing cut off after a colon', () => {
    let message = '';
    try {
      parseConfigDocument('k.yaml', 'relays: [\n  {id: ctx0 upstream: x}');
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(
      /^k\.yaml: line 2, column \d+: not valid YAML: .+ \(line 2 reads '\{id: ctx0 upstream: x\}'\)$/,
    );
    expect(message).not.toContain('\n');
    expect(message).not.toMatch(/:$/);
  });

  it('a duration without its unit says how to write it', () => {
    expect(() => parseDuration('--duration', '30')).toThrow("--duration: '30' has no unit: write 30s, 30m or 30ms");
    expect(parseDuration('--duration', '30s')).toBe(30_000);
    // in the file, a number is milliseconds
    expect(parseDuration('relay.drain_interval', 250)).toBe(250);
    expect(() => parseDuration('relay.drain_interval', -5)).toThrow(
      /a number in the configuration file is milliseconds/,
    );
  });
});
