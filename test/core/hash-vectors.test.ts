// Every vector of ../shared/vectors/hash-vectors.json, read at test time so the shared file stays the source of truth.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatWireHash, keyToHex, routerWireHashes, v2RootKey, wireHashBlocks } from '../../src/core/hashing/index.js';
import { isHashAlgo } from '../../src/core/wire/kv-event.js';
import { vectorsPath } from '../helpers/paths.js';

interface ChainedVector {
  algo: string;
  blocks: number[][];
  hashes: string[];
  salt_id?: number;
  lora_id?: number;
}
interface RouterVector {
  algo: string;
  tokens_per_block: number;
  prompt: number[];
  hashes: string[];
}
interface Vectors {
  chained_blocks: ChainedVector[];
  router_prompts: RouterVector[];
  v2_root_no_salt: string;
}

const vectors = JSON.parse(readFileSync(vectorsPath('hash-vectors.json'), 'utf8')) as Vectors;

function algoOf(v: { algo: string }) {
  if (!isHashAlgo(v.algo)) throw new Error(`unknown algo ${v.algo}`);
  return v.algo;
}

describe('shared hash vectors', () => {
  it.each(vectors.chained_blocks.map((v) => [JSON.stringify(v.blocks), v] as const))(
    'chained blocks %s',
    (_name, v) => {
      const options = {
        saltId: v.salt_id === undefined ? null : BigInt(v.salt_id),
        loraId: v.lora_id === undefined ? null : BigInt(v.lora_id),
      };
      expect(wireHashBlocks(v.blocks, algoOf(v), options).map(formatWireHash)).toEqual(v.hashes);
    },
  );

  it.each(vectors.router_prompts.map((v) => [v.algo, v] as const))('router chunking %s', (_name, v) => {
    expect(routerWireHashes(v.prompt, v.tokens_per_block, algoOf(v)).map(formatWireHash)).toEqual(v.hashes);
  });

  it('v2 root key without scope', () => {
    expect(keyToHex(v2RootKey())).toBe(vectors.v2_root_no_salt);
  });
});
