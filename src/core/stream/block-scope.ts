// What besides its tokens an engine keys a stored block by, as bytes the re-keyer scopes the block's key with
// (rekeyer.ts): vLLM's per-block extra_keys (LoRA name, multimodal identifiers with offsets, the request's
// cache_salt on the first block, a prompt-embeddings hash; `generate_block_hash_extra_keys`) and the event's
// lora_name; SGLang's cache_salt and lora_name, which namespace its event hashes (`mem_cache/events.py`). Two blocks
// with equal tokens and different scopes are different blocks, in the engine and in kvsentinel's tables. When the
// event says the hash covers extra keys it does not show reproducibly (mm_keys, floats), the engine hash itself is
// the scope: distinct, though no other block can ever share it.
import type { VllmExtraKey } from '../hashing/vllm-block-hash.js';
import type { StreamStored } from './decode-batch.js';

const utf8 = new TextEncoder();

/** A deterministic, unambiguous encoding (type tag, length, content) of one extra-keys value. */
function encodeValue(v: VllmExtraKey | null, out: string[]): void {
  if (v === null) out.push('n');
  else if (typeof v === 'string') out.push(`s${v.length}:${v}`);
  else if (typeof v === 'number' || typeof v === 'bigint') out.push(`i${v.toString()};`);
  else if (v instanceof Uint8Array)
    out.push(`b${v.length}:${Array.from(v, (b) => b.toString(16).padStart(2, '0')).join('')}`);
  else {
    out.push(`a${v.length}[`);
    for (const item of v) encodeValue(item, out);
    out.push(']');
  }
}

/** One scope per block of the event (null: the tokens are the whole identity). */
export function blockScopes(event: StreamStored): (Uint8Array | null)[] {
  const common: string[] = [];
  if (event.cacheSalt !== null) common.push(`salt:s${event.cacheSalt.length}:${event.cacheSalt}`);
  if (event.loraName !== null) common.push(`lora:s${event.loraName.length}:${event.loraName}`);
  return event.blockHashes.map((hash, i) => {
    const parts = [...common];
    const extra = event.blockExtraKeys?.[i] ?? null;
    if (extra !== null) {
      const out: string[] = [];
      encodeValue(extra, out);
      parts.push(`extra:${out.join('')}`);
    } else if (event.extraKeys && event.blockExtraKeys === null) parts.push(`engine:${hash.toString(16)}`);
    return parts.length === 0 ? null : utf8.encode(`kvsentinel-scope|${parts.join('|')}`);
  });
}
