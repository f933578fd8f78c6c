// The pieces the configuration's schemas are built of (config-schema.ts, zmq-config.ts): a value read by its
// grammar (config-values.ts) with its problem at the key's path, strict mappings whose unknown key names the closest
// known one, and the reading of a flag through the same schema as the file's key (one grammar per leaf).
import { z } from 'zod';
import { closestName } from '../../core/closest-name.js';
import { ConfigError } from './config-error.js';
import { ValueProblem, type ValueReader } from './config-values.js';

/** Reads `v` with a grammar; its problem becomes an issue at the key's path. */
function readInto<T>(read: ValueReader<T>, v: unknown, ctx: z.RefinementCtx): T {
  return checkAt(ctx, null, () => read(v));
}

/** A value read by a grammar; an absent key is undefined, or the default given. */
export function value<T>(read: ValueReader<T>): z.ZodType<T | undefined>;
export function value<T>(read: ValueReader<T>, fallback: T): z.ZodType<T>;
export function value<T>(read: ValueReader<T>, ...fallback: [T?]): z.ZodType<T | undefined> {
  return z
    .unknown()
    .optional()
    .transform((v, ctx) => (v === undefined ? fallback[0] : readInto(read, v, ctx)));
}

/** A required value: an absent key is read too, so its grammar says what is missing. */
export function required<T>(read: ValueReader<T>): z.ZodType<T> {
  return z
    .unknown()
    .optional()
    .transform((v, ctx) => readInto(read, v, ctx));
}

export function mapping<S extends z.ZodRawShape>(shape: S, expected = 'expected a mapping') {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code === 'unrecognized_keys') {
        const key = issue.keys[0] ?? '';
        const near = closestName(key, known);
        return `unknown key${near !== null ? ` (did you mean ${near}?)` : ''}; expected one of ${known.join(', ')}`;
      }
      return issue.code === 'invalid_type' ? expected : undefined;
    },
  });
}

/** absent or null: the section's defaults */
export function section<T extends z.ZodType>(schema: T) {
  return z.preprocess((v) => v ?? {}, schema);
}

/** absent or null: an empty list */
export function list<T extends z.ZodType>(item: T) {
  return z.preprocess((v) => v ?? [], z.array(item, { error: 'expected a list' }));
}

/** a mapping that may also be written as its one main value (`router_debug: URL`, `tokenizer: PATH`) */
export function shorthand<T extends z.ZodType>(key: string, schema: T) {
  return z.preprocess((v) => (typeof v === 'string' ? { [key]: v } : v), schema);
}

export function pathText(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`)).join('');
}

/**
 * Runs `read` (a grammar, or a check across a mapping's keys in its transform); its problem becomes an issue at the
 * value's path, or at `key` of the mapping, so the file names the key and a flag its option.
 */
export function checkAt<T>(ctx: z.RefinementCtx, key: string | null, read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (!(err instanceof ValueProblem)) throw err;
    ctx.addIssue({ code: 'custom', message: err.message, ...(key !== null ? { path: [key] } : {}) });
    return z.NEVER;
  }
}

/**
 * A flag's values read by the file's schema: its first problem as a ConfigError `WHERE OPTION: …`, the option
 * named as the flag spells it (`names`: the file's key → the flag's option, where they differ).
 */
export function readFlag<T extends z.ZodType>(
  schema: T,
  raw: Readonly<Record<string, unknown>>,
  where: string,
  names: Readonly<Record<string, string>> = {},
): z.output<T> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const key = issue.path[0];
  if (key === undefined) throw new ConfigError(`${where}: ${issue.message}`);
  throw new ConfigError(`${where} ${names[String(key)] ?? String(key)}: ${issue.message}`);
}

/** One key of a mapping whose output renames it: the field the code reads, and the value's schema. */
export interface Field<N extends string, T> {
  readonly name: N;
  readonly schema: z.ZodType<T>;
}

/** A key with a default, read by its grammar into the field `name` (the file's key is the table's key). */
export function field<N extends string, T>(name: N, read: ValueReader<T>, fallback: T): Field<N, T> {
  return { name, schema: value(read, fallback) };
}

type FieldTable = Readonly<Record<string, Field<string, unknown>>>;

/** The fields a table yields, typed by the table: each key is written once, in the table. */
export type Renamed<F extends FieldTable> = {
  readonly [K in keyof F as F[K]['name']]: F[K] extends Field<string, infer T> ? T : never;
};

/** The zod shape of a table's keys, to spread into a mapping. */
export function fieldShape<F extends FieldTable>(fields: F): { [K in keyof F]: F[K]['schema'] } {
  return Object.fromEntries(Object.entries(fields).map(([key, f]) => [key, f.schema])) as {
    [K in keyof F]: F[K]['schema'];
  };
}

/** A parsed mapping's values of a table's keys, under their fields' names. */
export function renamed<F extends FieldTable>(fields: F, parsed: Readonly<Record<string, unknown>>): Renamed<F> {
  return Object.fromEntries(Object.entries(fields).map(([key, f]) => [f.name, parsed[key]])) as Renamed<F>;
}
