import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** ../shared/vectors beside the checkout (CI lays shared/ next to the clone). */
export function vectorsPath(name: string): string {
  const candidates = [join(repoRoot, '../shared/vectors', name), join(repoRoot, 'test/fixtures/vectors', name)];
  const found = candidates.find((p) => existsSync(p));
  if (found === undefined) throw new Error(`hash vectors ${name} not found in ${candidates.join(' or ')}`);
  return found;
}
