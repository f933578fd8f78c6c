// Locations used by the benchmark suite, resolved from the compiled file (build/bench/lib/paths.js).
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
/** compiled benchmark modules */
export const benchBuildDir = join(repoRoot, 'build/bench');
/** compiled sources (the bench compiles src/ beside itself) */
export const srcBuildDir = join(repoRoot, 'build/src');
export const baselinesDir = join(repoRoot, 'bench/baselines');
/** generated payloads, bundles and native binaries */
export const scratchDir = join(repoRoot, 'build/bench-scratch');

export function scratchPath(name: string): string {
  mkdirSync(scratchDir, { recursive: true });
  return join(scratchDir, name);
}

export function hashVectorsPath(): string {
  return join(repoRoot, 'test/fixtures/vectors/hash-vectors.json');
}
