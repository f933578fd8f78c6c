// tokens-per-block-mismatch: the router chunks prompts into blocks of a different size than the workers' KV blocks,
// so the block hashes it computes can never equal the stored ones. Only with the router's chunk size known — stated by
// a source or inferred from its routing (never the default assumed for lack of a source). When the newest router
// logged that it skips those servers' polling on purpose, a warning: it copes, the events are what is lost.
import type { Rule } from '../rule.js';
import { windowEvidence } from './rule-math.js';

export const tokensPerBlockMismatch: Rule = {
  id: 'tokens-per-block-mismatch',
  evaluate(input) {
    const tpb = input.router.blockSize?.tokens ?? null;
    if (tpb === null || !input.router.consumesEvents) return null;
    if (input.decisions.decisions < input.thresholds.minServerRequests) return null;
    const hit = input.servers.filter((s) => {
      const size = s.advertisedBlockSize ?? s.inferredBlockSize;
      return size !== null && size !== tpb;
    });
    if (hit.length === 0) return null;
    const sizes = [...new Set(hit.map((s) => (s.advertisedBlockSize ?? s.inferredBlockSize)!))];
    const names = hit.map((s) => s.server);
    const workerSize = sizes[0]!;
    // the newest router logged that it knows and copes (skips their polling, tracks routed blocks): the events are
    // wasted, routing still works — a warning; sizes that do not divide leave servers unprepared — critical
    const byDesign = hit.every((s) => s.pollingSkipped?.divisible === true);
    return {
      servers: names,
      ...(byDesign ? { severity: 'warning' as const } : {}),
      summary: byDesign
        ? `the router hashes ${tpb}-token chunks but ${names.join(', ')} store ${sizes.join('/')}-token blocks: the router skips their event polling by design and routes on the blocks it routed itself, so their KV events are wasted`
        : `the router hashes ${tpb}-token chunks but ${names.join(', ')} store ${sizes.join('/')}-token blocks: its hashes can never match`,
      evidence: {
        router_tokens_per_block: tpb,
        router_tokens_per_block_from:
          input.router.blockSize?.basis === 'inferred'
            ? 'inferred from its routing'
            : (input.router.blockSize?.from ?? 'unknown'),
        worker_block_size: sizes.join('/'),
        worker_block_size_from: hit.some((s) => s.advertisedBlockSize !== null) ? 'server_info' : 'stored events',
        decisions: input.decisions.decisions,
        ...windowEvidence(input.window),
      },
      cause:
        'docs/trtllm-wire.md §1.4/§7.3: router chunking differs from the worker block size, so router and worker hashes live in different spaces' +
        (hit.some((s) => s.pollingSkipped?.divisible === false)
          ? '; the sizes do not divide, so the newest router never prepares those servers (RuntimeError at startup)'
          : hit.some((s) => s.pollingSkipped !== null)
            ? '; the newest router knows it and skips their event polling, relying on routed-block tracking alone'
            : ''),
      fix:
        input.router.profile === 'newest'
          ? `leave router_args.tokens_per_block unset (the newest router adopts the worker's ${workerSize}) or set it to ${workerSize}; unset TRTLLM_KVCACHE_AWARE_ROUTER_HASH_TOKENS_PER_BLOCK`
          : `router_args.tokens_per_block: ${workerSize} (or TRTLLM_KVCACHE_AWARE_ROUTER_HASH_TOKENS_PER_BLOCK=${workerSize}), the workers' kv_cache_config.tokens_per_block`,
    };
  },
};
