// Recomputes stored block hashes from their tokens with the advertised algorithm (docs/design.md §4 "hash
// verification"). Each block is chained to the wire hash before it, so one bad block does not cascade. Blocks whose
// hash depends on inputs the event does not carry (multimodal keys, extra token ids, an unreproducible salt
// generation, a truncated v2 parent we never saw in full) are unverifiable, not mismatches.
import { BlockSha256 } from '../hashing/block-sha256.js';
import { cacheSaltId } from '../hashing/cache-salt.js';
import { hashV1Block } from '../hashing/v1-block-key.js';
import { keyToHex, truncateKeyToU64, v2BlockKey, v2RootKey } from '../hashing/v2-sha256.js';
import { HASH_ALGOS, type HashAlgo, type StoredBlock, type WireBlockHash } from '../wire/kv-event.js';
import { U64LruMap } from './u64-lru-map.js';

export type HashCheck = 'match' | 'mismatch' | 'unverifiable';

export interface StoredEventCheck {
  /** one result per block, in order */
  readonly checks: readonly HashCheck[];
  /** token count per block (kept when tokens are stripped from a bundle) */
  readonly tokenCounts: readonly number[];
  /** on a mismatch of a root block: another algorithm that does reproduce it, else null */
  readonly alternative: HashAlgo | null;
}

const HEX_RE = /^[0-9a-f]{64}$/;

function hexToBytes(hex: string): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function asU64(hash: WireBlockHash): bigint | null {
  return typeof hash === 'bigint' ? hash : null;
}

export class HashVerifier {
  /** full 32-byte keys of v2_sha256_64 blocks we computed, by their truncated wire value */
  readonly #v2Full: U64LruMap<Uint8Array>;
  /** kept: every stored V2 block is keyed with it */
  readonly #hasher = new BlockSha256();

  constructor(v2KeyCap = 65_536) {
    this.#v2Full = new U64LruMap(v2KeyCap);
  }

  /** full v2 keys evicted by the cap (their children then check as unverifiable) */
  get v2KeysEvicted(): number {
    return this.#v2Full.dropped;
  }

  check(parentHash: WireBlockHash | null, blocks: readonly StoredBlock[], algo: HashAlgo): StoredEventCheck {
    const checks: HashCheck[] = [];
    let alternative: HashAlgo | null = null;
    let parent: WireBlockHash | null = parentHash;
    for (const block of blocks) {
      const result = this.#checkBlock(parent, block, algo);
      if (result === 'mismatch' && parent === null && alternative === null)
        alternative = this.#alternative(block, algo);
      checks.push(result);
      parent = block.blockHash;
    }
    return { checks, tokenCounts: blocks.map((b) => b.tokens.length), alternative };
  }

  #alternative(block: StoredBlock, advertised: HashAlgo): HashAlgo | null {
    for (const algo of HASH_ALGOS) {
      if (algo === advertised) continue;
      if (this.#recompute(null, block, algo, false) === 'match') return algo;
    }
    return null;
  }

  #checkBlock(parent: WireBlockHash | null, block: StoredBlock, algo: HashAlgo): HashCheck {
    // a block without tokens (a stream whose token ids were not integers) cannot be recomputed either
    if (block.mmKeys.length > 0 || block.tokenExtraIds !== null || block.tokens.length === 0) return 'unverifiable';
    return this.#recompute(parent, block, algo, true);
  }

  #recompute(parent: WireBlockHash | null, block: StoredBlock, algo: HashAlgo, remember: boolean): HashCheck {
    const salted = parent === null && block.cacheSalt !== null;
    const saltId = salted ? cacheSaltId(block.cacheSalt) : null;
    const loraId = block.loraId;
    if (algo === 'v1_block_key') {
      const parentU64 = parent === null ? 0n : asU64(parent);
      const actual = asU64(block.blockHash);
      if (parentU64 === null || actual === null) return 'mismatch';
      const expected = hashV1Block(block.tokens, parentU64, { saltId, loraId });
      // salt generations differ between builds (docs/trtllm-wire.md §1.2): a salted miss is not proof of a bad hash
      if (expected === actual) return 'match';
      return salted ? 'unverifiable' : 'mismatch';
    }
    let parentKey: Uint8Array | undefined;
    if (parent === null) parentKey = v2RootKey({ saltId, loraId });
    else if (algo === 'v2_sha256') {
      if (typeof parent !== 'string' || !HEX_RE.test(parent)) return 'mismatch';
      parentKey = hexToBytes(parent);
    } else {
      const u64 = asU64(parent);
      if (u64 === null) return 'mismatch';
      parentKey = this.#v2Full.get(u64);
      if (parentKey === undefined) return 'unverifiable';
    }
    const key = v2BlockKey(parentKey, block.tokens, 0, block.tokens.length, this.#hasher);
    let ok: boolean;
    if (algo === 'v2_sha256') {
      ok = typeof block.blockHash === 'string' && block.blockHash === keyToHex(key);
    } else {
      const truncated = truncateKeyToU64(key);
      ok = block.blockHash === truncated;
      if (ok && remember) this.#v2Full.set(truncated, key);
    }
    if (ok) return 'match';
    return salted ? 'unverifiable' : 'mismatch';
  }
}
