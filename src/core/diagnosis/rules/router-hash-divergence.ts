// router-hash-divergence: block sizes and algorithm agree and the workers do reuse their caches, yet the block keys of
// the prompts the router sends are never among the blocks the workers store (tokenizer / chat template / salt
// drift) — or the router's own reported matches contradict what its table should give.
import { withOwnTable } from './own-table-advice.js';
import type { Rule } from '../rule.js';
import { ratio, round3, windowEvidence } from './rule-math.js';

export const routerHashDivergence: Rule = {
  id: 'router-hash-divergence',
  evaluate(input) {
    if (!input.router.consumesEvents) return null;
    const t = input.thresholds;
    const d = input.decisions;
    const truthBlocks = input.servers.reduce((n, s) => n + s.truthBlocks, 0);
    const realisedHit = ratio(d.joinedCachedTokens, d.joinedPromptTokens);
    const mismatches = input.servers.reduce((n, s) => n + s.hashChecks.mismatch, 0);
    // most stored blocks scoped by what the prompts do not show (tenants' cache_salt, LoRA names): prompt keys
    // cannot match them whatever the router does, so their absence says nothing about the router's hashing
    const streamStored = input.servers.reduce((n, s) => n + (s.streamStoredBlocks ?? 0), 0);
    const scoped = input.servers.reduce((n, s) => n + (s.streamScopedBlocks ?? 0), 0);
    const scopedMostly = streamStored > 0 && scoped * 2 >= streamStored;
    const keyed =
      !scopedMostly &&
      input.seesWorkerEvents &&
      d.withKeys >= t.minDecisions &&
      truthBlocks > 0 &&
      mismatches < t.minHashMismatches &&
      realisedHit >= 0.2 &&
      ratio(d.firstBlockHeld, d.withKeys) < t.maxDivergentMatchShare &&
      ratio(d.oracleAnyMatch, d.withKeys) < t.maxDivergentMatchShare;
    // relay: our replica holds what the router was sent and predicts matches, yet the router's choices do not
    // follow the score those matches give — the router hashes something else
    const contradicted =
      input.seesRouterPolls &&
      d.withKeys >= t.minDecisions &&
      mismatches < t.minHashMismatches &&
      ratio(d.predictedAnyMatch, d.withKeys) >= t.oracleMatchMinShare &&
      ratio(d.agreesWithReplica, d.withKeys) < t.minReplicaAgreement;
    const rs = input.routerScores;
    const debug =
      rs.replicaPredictedMatch >= t.minDecisions && ratio(rs.replicaMatchRouterNone, rs.replicaPredictedMatch) >= 0.9;
    if (!keyed && !debug && !contradicted) return null;
    // a chunk size no source states (unknown, or inferred earlier — the router may have been reconfigured since): a
    // router chunking other than the workers looks the same from outside as drifting token ids
    const sizeUnknown =
      contradicted &&
      !keyed &&
      !debug &&
      (input.router.blockSize === null || input.router.blockSize.basis === 'inferred');
    const sizes = [
      ...new Set(
        input.servers.map((s) => s.advertisedBlockSize ?? s.inferredBlockSize).filter((v): v is number => v !== null),
      ),
    ];
    const workerSize = sizes.join('/') || "the workers' kv_cache_config.tokens_per_block";
    return {
      servers: input.servers.map((s) => s.server),
      summary: keyed
        ? `workers reuse ${(realisedHit * 100).toFixed(0)}% of prompt tokens, yet the block keys of the prompts the router sends match ${(ratio(d.oracleAnyMatch, d.withKeys) * 100).toFixed(1)}% of decisions in what they store`
        : debug
          ? `the router reports no matched tokens on ${rs.replicaMatchRouterNone} of ${rs.replicaPredictedMatch} decisions where its own table should have matched`
          : `the router's table should match ${(ratio(d.predictedAnyMatch, d.withKeys) * 100).toFixed(0)}% of requests, yet only ${(ratio(d.agreesWithReplica, d.withKeys) * 100).toFixed(0)}% of its choices follow the score that gives` +
            (sizeUnknown
              ? ` (no source states the router's tokens_per_block${input.router.blockSize !== null ? `, ${input.router.blockSize.tokens} was inferred from its earlier routing` : ''}: ` +
                `two causes fit equally — a router chunk size other than the workers' ${workerSize} (the 2026-06 router defaults to 32), or token ids that differ (tokenizer, chat template); ` +
                `to tell them apart, state the router's size (--router.tokens-per-block, router.tokens_per_block, or --orchestrator-log at TLLM_LOG_LEVEL=info: "BlockHashMixin: tokens_per_block=N"), ` +
                `or compare \`kvsentinel hash --prompt --tokens-per-block N\` of a served prompt with the workers' stored hashes)`
              : ''),
      evidence: {
        decisions_with_keys: d.withKeys,
        first_block_held_share: round3(ratio(d.firstBlockHeld, d.withKeys)),
        any_oracle_match_share: round3(ratio(d.oracleAnyMatch, d.withKeys)),
        realised_hit_ratio: round3(realisedHit),
        stored_blocks: truthBlocks,
        hash_mismatches: mismatches,
        router_reported_none_where_table_matches: rs.replicaMatchRouterNone,
        predicted_match_share: round3(ratio(d.predictedAnyMatch, d.withKeys)),
        choices_following_replicated_score: round3(ratio(d.agreesWithReplica, d.withKeys)),
        router_tokens_per_block: input.router.blockSize?.tokens ?? 'unknown',
        ...windowEvidence(input.window),
      },
      cause:
        "docs/trtllm-wire.md §7.3: the router hashes token ids that differ from the workers' (own chat rendering / tokenizer, `auto` algorithm drift, cache_salt)",
      fix:
        (sizeUnknown
          ? `router_args.tokens_per_block: ${workerSize} if the router's differs (state it explicitly); if it does not, `
          : '') +
        "send the workers' token ids: the same tokenizer and chat template on router and CTX workers (matching render fingerprints), " +
        withOwnTable(
          input,
          'kv_cache_config.kv_cache_event_hash_algo set explicitly (not auto) on both sides, the same cache_salt handling',
          '; until then ',
          ' (self-consistent router hashes)',
        ),
    };
  },
};
