// hash-mismatch: stored block hashes do not recompute from their tokens with the advertised algorithm — the router
// hashes requests with that algorithm, so its keys cannot meet the workers'.
// For a vLLM stream the algorithm is the one the operator stated (sha256_cbor, PYTHONHASHSEED): a mismatch means the
// workers do not hash that way, so a router reproducing vLLM's hashes with those settings cannot meet their keys.
import type { Rule, RuleHit, ServerDiagnosis } from '../rule.js';
import { ratio, round3, windowEvidence } from './rule-math.js';

function vllmMismatch(
  hit: readonly ServerDiagnosis[],
  window: { readonly from: number; readonly to: number } | null,
): RuleHit {
  const names = hit.map((s) => s.server);
  const match = hit.reduce((n, s) => n + s.hashChecks.match, 0);
  const mismatch = hit.reduce((n, s) => n + s.hashChecks.mismatch, 0);
  const seeded = hit.every((s) => s.vllmHashing?.seedKnown === true);
  return {
    servers: names,
    summary: `${mismatch} stored block hashes on ${names.join(', ')} do not recompute with vLLM sha256_cbor${seeded ? ' and the PYTHONHASHSEED given' : ''}`,
    evidence: {
      mismatch,
      match,
      unverifiable: hit.reduce((n, s) => n + s.hashChecks.unverifiable, 0),
      mismatch_share: round3(ratio(mismatch, match + mismatch)),
      advertised_algo: hit
        .map((s) => `${s.server}:vllm/sha256_cbor${s.vllmHashing?.seedKnown === true ? '+seed' : ''}`)
        .join(' '),
      recomputes_with: 'none',
      ...windowEvidence(window),
    },
    cause:
      'docs/event-streams.md "vLLM block hashes": the workers do not hash as stated — another --prefix-caching-hash-algo, or (when only root blocks miss) ' +
      'another PYTHONHASHSEED, or none (NONE_HASH is then random per process); a router reproducing vLLM hashes with the stated settings cannot meet theirs',
    fix: `start vLLM on ${names.join(', ')} with --prefix-caching-hash-algo sha256_cbor and the same PYTHONHASHSEED as the router (and give kvsentinel the same: --zmq …,hash=sha256_cbor,seed=…)`,
  };
}

export const hashMismatch: Rule = {
  id: 'hash-mismatch',
  evaluate(input) {
    if (!input.seesWorkerEvents) return null;
    const hit = input.servers.filter(
      (s) =>
        s.hashChecks.mismatch >= input.thresholds.minHashMismatches &&
        ratio(s.hashChecks.mismatch, s.hashChecks.match + s.hashChecks.mismatch) >= 0.05,
    );
    if (hit.length === 0) return null;
    const names = hit.map((s) => s.server);
    const match = hit.reduce((n, s) => n + s.hashChecks.match, 0);
    const mismatch = hit.reduce((n, s) => n + s.hashChecks.mismatch, 0);
    const alternative = hit.find((s) => s.alternativeHashAlgo !== null)?.alternativeHashAlgo ?? null;
    const vllm = hit.filter((s) => s.vllmHashing !== null);
    if (vllm.length > 0) return vllmMismatch(vllm, input.window);
    const advertised = hit.map((s) => `${s.server}:${s.advertisedHashAlgo ?? 'unstated(v1_block_key)'}`).join(' ');
    return {
      servers: names,
      summary:
        `${mismatch} stored block hashes on ${names.join(', ')} do not recompute with the advertised algorithm` +
        (alternative !== null ? ` (they do with ${alternative})` : ''),
      evidence: {
        mismatch,
        match,
        unverifiable: hit.reduce((n, s) => n + s.hashChecks.unverifiable, 0),
        mismatch_share: round3(ratio(mismatch, match + mismatch)),
        advertised_algo: advertised,
        recomputes_with: alternative ?? 'none',
        ...windowEvidence(input.window),
      },
      cause:
        'docs/trtllm-wire.md §7.3: hash-space mismatch — `auto` algorithm meaning drift between versions, or salted requests on V1 workers',
      fix:
        alternative !== null
          ? `kv_cache_config.kv_cache_event_hash_algo: ${alternative} on CTX workers ${names.join(', ')} (explicit, never auto), so /server_info advertises what the events use`
          : `kv_cache_config.kv_cache_event_hash_algo: v1_block_key on CTX workers ${names.join(', ')} (explicit, never auto) and the same on the router's side`,
    };
  },
};
