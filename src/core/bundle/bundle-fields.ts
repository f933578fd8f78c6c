// The bundle decoder's field readers: each checks one JSON value and throws DecodeError naming its path, which
// decodeBundleRecord turns into an issue for the line.
import { KvsentinelError } from '../errors.js';
import { ROUTER_PROFILES, type RouterProfile } from '../observe/observation.js';
import { isHashAlgo, type HashAlgo, type WireBlockHash } from '../wire/kv-event.js';
import { decimalFitsU64 } from '../wire/u64-decimal.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export class DecodeError extends KvsentinelError {
  readonly path: string;

  constructor(path: string, message: string) {
    super('bundle-invalid', message);
    this.path = path;
  }
}

/** Character loops, not regular expressions: every stored block and removed hash of a bundle passes through here. */
export function hashIn(value: Json | undefined, path: string, suffix = '', index = -1): WireBlockHash {
  if (typeof value === 'string') {
    const n = value.length;
    if (n === 64) {
      let hex = true;
      for (let i = 0; hex && i < 64; i++) {
        const c = value.charCodeAt(i);
        hex = (c >= 48 && c <= 57) || (c >= 97 && c <= 102);
      }
      if (hex) return value;
    } else if (n >= 1 && n <= 20) {
      let v = 0;
      let digits = true;
      for (let i = 0; digits && i < n; i++) {
        const d = value.charCodeAt(i) - 48;
        digits = d >= 0 && d <= 9;
        v = v * 10 + d;
      }
      // up to 15 digits the double is exact; longer ones go through BigInt's own parser
      if (digits && n <= 15) return BigInt(v);
      if (digits && decimalFitsU64(value)) return BigInt(value);
    }
  }
  // the path is built only here: array items would otherwise pay for a path string each
  throw new DecodeError(
    index >= 0 ? `${path}${suffix}[${index}]` : path + suffix,
    'expected a block hash (unsigned 64-bit decimal string or 64-char hex)',
  );
}

export function asObject(value: Json | undefined, path: string, suffix = ''): JsonObject {
  if (value === null || value === undefined || typeof value !== 'object' || Array.isArray(value))
    throw new DecodeError(path + suffix, 'expected an object');
  return value;
}
export function num(value: Json | undefined, path: string, suffix = ''): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new DecodeError(path + suffix, 'expected a number');
  return value;
}
export function numOrNull(value: Json | undefined, path: string, suffix = ''): number | null {
  return value === null || value === undefined ? null : num(value, path, suffix);
}
export function str(value: Json | undefined, path: string, suffix = ''): string {
  if (typeof value !== 'string') throw new DecodeError(path + suffix, 'expected a string');
  return value;
}
export function strOrNull(value: Json | undefined, path: string, suffix = ''): string | null {
  return value === null || value === undefined ? null : str(value, path, suffix);
}
export function oneOfOrNull<T extends string>(value: Json | undefined, allowed: readonly T[], path: string): T | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value))
    throw new DecodeError(path, `expected one of ${allowed.join(', ')}`);
  return value as T;
}
export function boolOrNull(value: Json | undefined, path: string): boolean | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'boolean') throw new DecodeError(path, 'expected true or false');
  return value;
}
export function algoOrNull(value: Json | undefined, path: string, suffix = ''): HashAlgo | null {
  if (value === null || value === undefined) return null;
  if (!isHashAlgo(value)) throw new DecodeError(path + suffix, 'expected a hash algorithm name');
  return value;
}
export function profileOrNull(value: Json | undefined, path: string): RouterProfile | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string' || !(ROUTER_PROFILES as readonly string[]).includes(value))
    throw new DecodeError(path, `expected one of ${ROUTER_PROFILES.join(', ')}`);
  return value as RouterProfile;
}
export function arr(value: Json | undefined, path: string, suffix = ''): Json[] {
  if (!Array.isArray(value)) throw new DecodeError(path + suffix, 'expected an array');
  return value;
}
export function tokens(value: Json | undefined, path: string, suffix = ''): Uint32Array {
  const a = arr(value, path, suffix);
  const out = new Uint32Array(a.length);
  a.forEach((v, i) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffff_ffff)
      throw new DecodeError(`${path}${suffix}[${i}]`, 'expected a token id');
    out[i] = v;
  });
  return out;
}
export function diff(
  value: Json | undefined,
  path: string,
  suffix = '',
): { newValue: number | null; oldValue: number | null } | null {
  if (value === null || value === undefined) return null;
  const o = asObject(value, path, suffix);
  return {
    newValue: numOrNull(o.newValue, `${path}${suffix}.newValue`),
    oldValue: numOrNull(o.oldValue, `${path}${suffix}.oldValue`),
  };
}

export function ids(value: Json | undefined, path: string): number[] {
  return arr(value, path).map((v, i) => {
    const n = num(v, `${path}[${i}]`);
    if (!Number.isInteger(n) || n < 0 || n > 0xffff_ffff) throw new DecodeError(`${path}[${i}]`, 'expected a token id');
    return n;
  });
}
