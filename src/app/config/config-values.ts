// The value grammars of the serve configuration, shared by the file schema (config-schema.ts, where the key path
// names the value) and the flags (where the flag does). Each reads an unknown value or throws a ValueProblem
// whose message says what is wrong with it; whoever called it says where it came from.
import { readFileSync } from 'node:fs';
import { parseSizeText, readDuration } from '../../core/units.js';
import { fileErrorText } from '../../sources/file-error-text.js';
import { KvsentinelError } from '../../core/errors.js';
import { ConfigError } from './config-error.js';

/** A value's own problem; whoever read it turns it into a ConfigError that says where the value came from. */
export class ValueProblem extends KvsentinelError {
  override readonly name = 'ValueProblem';

  constructor(message: string) {
    super('config-invalid', message);
  }
}

export type ValueReader<T> = (v: unknown) => T;

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

const ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export function problem(message: string): never {
  throw new ValueProblem(message);
}

export function describe(v: unknown): string {
  return typeof v === 'string' ? `'${v}'` : (JSON.stringify(v) ?? String(v));
}

/** A reader's problem named by a flag or a path: `--duration: 'soon' is not …`. */
export function readAt<T>(where: string, read: ValueReader<T>, v: unknown): T {
  try {
    return read(v);
  } catch (err) {
    if (err instanceof ValueProblem) throw new ConfigError(`${where}: ${err.message}`);
    throw err;
  }
}

/** A positive duration: a text with its unit, or (in the file) a number of milliseconds (docs/units.md). */
export const durationMs: ValueReader<number> = (v) => {
  if (typeof v === 'number' && Number.isFinite(v) && v > 0) return v;
  const read = typeof v === 'string' ? readDuration(v) : null;
  if (read !== null && 'ms' in read && read.ms > 0) return read.ms;
  // a text without its unit could be seconds or milliseconds: say how to write it (only a file's numbers are ms)
  if (read !== null && 'error' in read && read.error === 'no-unit') {
    const n = (v as string).trim();
    return problem(`'${n}' has no unit: write ${n}s, ${n}m or ${n}ms`);
  }
  return problem(
    `${describe(v)} is not a positive duration (e.g. 250ms, 5s, 1m${typeof v === 'number' ? '; a number in the configuration file is milliseconds' : ''})`,
  );
};

/** A duration that may be 0 (off). */
export const durationOrZeroMs: ValueReader<number> = (v) => (v === 0 || v === '0' ? 0 : durationMs(v));

export const sizeBytes: ValueReader<number> = (v) => {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v > 0) return v;
  const n = typeof v === 'string' ? parseSizeText(v) : null;
  if (n !== null && n > 0) return n;
  return problem(`${describe(v)} is not a positive size (e.g. 1048576, 64MiB)`);
};

export const positiveInt: ValueReader<number> = (v) => {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v > 0) return v;
  return problem(`${describe(v)} is not a positive integer`);
};

/** A positive integer from a flag's text (or a number). */
export const positiveIntText: ValueReader<number> = (v) =>
  positiveInt(typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v);

export const httpUrl: ValueReader<string> = (v) => {
  if (typeof v === 'string') {
    try {
      const u = new URL(v);
      if ((u.protocol === 'http:' || u.protocol === 'https:') && u.search === '' && u.hash === '')
        return v.replace(/\/+$/, '');
    } catch {
      // not a URL: said below
    }
  }
  return problem(`${describe(v)} is not an http(s) URL without query`);
};

export const serverId: ValueReader<string> = (v) => {
  if (typeof v === 'string' && ID.test(v)) return v;
  return problem(`${describe(v)} is not a server id (letters, digits, '_', '.', '-'; at most 64)`);
};

export const filePath: ValueReader<string> = (v) =>
  typeof v === 'string' && v !== '' ? v : problem(`${describe(v)} is not a file path`);

export const bool: ValueReader<boolean> = (v) =>
  typeof v === 'boolean' ? v : problem(`${describe(v)} is not true or false`);

export function oneOf<T extends string>(
  values: readonly T[],
  quote: (v: unknown) => string = describe,
): ValueReader<T> {
  return (v) =>
    (values as readonly unknown[]).includes(v) ? (v as T) : problem(`${quote(v)} is not one of ${values.join(', ')}`);
}

function port(text: string): number {
  if (/^\d+$/.test(text)) {
    const p = Number(text);
    if (p >= 0 && p <= 65535) return p;
  }
  return problem(`'${text}' is not a port (0-65535)`);
}

/** `HOST:PORT`, `[v6]:PORT` or `:PORT` (all interfaces). */
/** HOST:PORT, [IPV6]:PORT or :PORT, whose empty host is `emptyHost` (serve: every interface; demo: loopback). */
export function hostPortOr(emptyHost: string): ValueReader<HostPort> {
  return (v) => {
    if (typeof v !== 'string') return problem(`${describe(v)} is not HOST:PORT`);
    const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(v.trim());
    if (m === null) return problem(`'${v}' is not HOST:PORT`);
    const host = m[1] ?? m[2] ?? '';
    return { host: host === '' ? emptyHost : host, port: port(m[3] as string) };
  };
}

export const hostPort: ValueReader<HostPort> = hostPortOr('0.0.0.0');

/**
 * `[HOST:]PORT[,PORT…]` of a relay's listeners (or a YAML list of ports): one port per consumer, i.e. per
 * orchestrator replica; null host means the relays' default host.
 */
export const relayListen: ValueReader<{ host: string | null; port: number; replicaPorts: number[] }> = (v) => {
  if (v === undefined) return problem('missing ([HOST:]PORT)');
  const parts = Array.isArray(v) ? v : typeof v === 'string' ? v.split(',') : [v];
  if (parts.length === 0) return problem('expected [HOST:]PORT[,PORT…]');
  const [first, ...rest] = parts as unknown[];
  const replicaPorts = rest.map((p) => port(String(p).trim()));
  const head = typeof first === 'string' ? first.trim() : first;
  const listen =
    typeof head === 'number' || (typeof head === 'string' && /^\d+$/.test(head))
      ? { host: null, port: port(String(head)) }
      : hostPort(head);
  return { ...listen, replicaPorts };
};

/** The token is the file's first line; an unreadable or empty file is a problem of the key that names it. */
export const bearerTokenFromFile: ValueReader<string> = (v) => {
  const path = typeof v === 'string' && v !== '' ? v : problem(`${describe(v)} is not a file path`);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return problem(`cannot read ${path}: ${fileErrorText(err)}`);
  }
  const token = (text.split(/\r?\n/)[0] ?? '').trim();
  if (token.length < 16) problem(`${path}: the token must be at least 16 characters on the first line`);
  return token;
};
