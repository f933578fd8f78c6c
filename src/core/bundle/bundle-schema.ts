// The bundle decoder's schema: an observation kind's fields as a table of readers (bundle-fields.ts), one per field
// of its type, so a field added to the type does not compile until its reader is written here. A table is read
// into a plain object in the type's key order (a decoded line re-encodes to the same JSON).
import { DecodeError, arr, asObject, oneOfOrNull, str, type Json, type JsonObject } from './bundle-fields.js';

export type Reader<T> = (value: Json | undefined, path: string) => T;

/** A field a line may leave out: then the observation leaves it out too (a bundle round-trips). */
export interface Optional<T> {
  readonly optional: Reader<T>;
  /** 'undefined': a null in the line is read (the reader decides what it means); 'nullish': null is left out too */
  readonly absent: 'undefined' | 'nullish';
}

/** in the type, never in a bundle line (computed in the process, e.g. a decision's prompt fingerprints) */
export const NOT_RECORDED = Symbol('not recorded');
/** read beside the table by the kind's own decoder (worker events, with the token counts their digest needs) */
export const READ_APART = Symbol('read apart');

type Field<V> =
  typeof READ_APART | (undefined extends V ? Optional<Exclude<V, undefined>> | typeof NOT_RECORDED : Reader<V>);

/** every field of an observation type but `kind` and `ts` (the dispatch reads those) */
export type Fields<O> = { readonly [K in Exclude<keyof O, 'kind' | 'ts'>]-?: Field<O[K]> };
/** every field of a nested shape */
export type Shape<T> = { readonly [K in keyof T]-?: Field<T[K]> };

interface Compiled {
  readonly key: string;
  /** the path at the top of a line, built once */
  readonly topPath: string;
  readonly read: Reader<unknown> | null;
  readonly absent: 'never' | 'undefined' | 'nullish';
}

function compile(fields: object): readonly Compiled[] {
  const out: Compiled[] = [];
  for (const [key, f] of Object.entries(fields) as [string, unknown][]) {
    if (f === NOT_RECORDED) continue;
    const topPath = `$.${key}`;
    if (f === READ_APART) out.push({ key, topPath, read: null, absent: 'never' });
    else if (typeof f === 'function') out.push({ key, topPath, read: f as Reader<unknown>, absent: 'never' });
    else {
      const o = f as Optional<unknown>;
      out.push({ key, topPath, read: o.optional, absent: o.absent });
    }
  }
  return out;
}

function readInto(
  out: Record<string, unknown>,
  o: JsonObject,
  fields: readonly Compiled[],
  base: string | null,
  apart: Readonly<Record<string, unknown>> | undefined,
): void {
  for (const f of fields) {
    const v = o[f.key];
    if (f.read === null) {
      out[f.key] = apart?.[f.key];
      continue;
    }
    if (f.absent !== 'never' && (v === undefined || (f.absent === 'nullish' && v === null))) continue;
    out[f.key] = f.read(v, base === null ? f.topPath : `${base}.${f.key}`);
  }
}

/**
 * The reader of one kind's line: `kind` and `ts`, then each field of the table; `apart` holds the values of the
 * fields marked READ_APART.
 */
export function lineReader<O extends { readonly kind: string; readonly ts: number }>(
  kind: O['kind'],
  fields: Fields<O>,
): (o: JsonObject, ts: number, apart?: Readonly<Record<string, unknown>>) => O {
  const compiled = compile(fields);
  return (o, ts, apart) => {
    const out: Record<string, unknown> = { kind, ts };
    readInto(out, o, compiled, null, apart);
    return out as unknown as O;
  };
}

/** A nested object: each field at `PATH.key`. */
export function objectOf<T>(fields: Shape<T>): Reader<T> {
  const compiled = compile(fields);
  return (value, path) => {
    const out: Record<string, unknown> = {};
    readInto(out, asObject(value, path), compiled, path, undefined);
    return out as T;
  };
}

/** A field the line may leave out; `absent: 'nullish'` leaves a null out too. */
export function optional<T>(read: Reader<T>, absent: Optional<T>['absent'] = 'undefined'): Optional<T> {
  return { optional: read, absent };
}

/** null and a missing value are null. */
export function nullable<T>(read: Reader<T>): Reader<T | null> {
  return (value, path) => (value === null || value === undefined ? null : read(value, path));
}

/** What a reader of `T | null` gives, with null (or a missing value) as `fallback`. */
export function orElse<T>(read: Reader<T | null>, fallback: T): Reader<T> {
  return (value, path) => read(value, path) ?? fallback;
}

/** An array, each item at `PATH[i]`. */
export function arrayOf<T>(read: Reader<T>): Reader<T[]> {
  return (value, path) => arr(value, path).map((item, i) => read(item, `${path}[${i}]`));
}

/** One of `allowed`, null or missing as null (the field readers' own message). */
export function oneOf<T extends string>(allowed: readonly T[]): Reader<T | null> {
  return (value, path) => oneOfOrNull(value, allowed, path);
}

/** One of `allowed`; anything else a DecodeError saying `unknown(got)` at the field's path. */
export function enumOf<T extends string>(allowed: readonly T[], unknown: (got: string) => string): Reader<T> {
  return (value, path) => {
    const s = str(value, path);
    if (!(allowed as readonly string[]).includes(s)) throw new DecodeError(path, unknown(s));
    return s as T;
  };
}
