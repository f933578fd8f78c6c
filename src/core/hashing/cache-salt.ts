// Cache-salt id of the newest kv_cache_hash.py: int.from_bytes(sha256(utf8(salt))[:8], 'little').
// Older builds used blake3 and the V1 C++ manager std::hash (docs/trtllm-wire.md §1.2); those are not reproducible here.
import { sha256 } from '@noble/hashes/sha2.js';

export function cacheSaltId(salt: string): bigint {
  const digest = sha256(new TextEncoder().encode(salt));
  let value = 0n;
  for (let i = 7; i >= 0; i--) value = (value << 8n) | BigInt(digest[i]!);
  return value;
}
