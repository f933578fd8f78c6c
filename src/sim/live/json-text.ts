// Writes a lossless JSON tree (src/core/wire/lossless-json.ts) back as compact JSON text: bigints as their exact
// digits, so ids and hashes read losslessly are re-served unchanged.
import type { JsonValue } from '../../core/wire/lossless-json.js';

export function jsonText(value: JsonValue): string {
  if (value === null) return 'null';
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : 'null';
  if (typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  return `{${Object.entries(value)
    .map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`)
    .join(',')}}`;
}
