// What kvsentinel believes about the cluster it diagnoses, and how it knows each fact: the router (type, chunk
// size, max_batch_size, backfill) and every worker (block size, hash algorithm). A finding is only as good as these,
// so the report shows them next to the findings.
import type { DiagnosisInput } from '../diagnosis/rule.js';

export interface ConfigurationFact {
  readonly key: string;
  /** null: unknown */
  readonly value: string | null;
  /** how kvsentinel knows, in words */
  readonly from: string;
}

export interface WorkerConfiguration {
  readonly server: string;
  readonly facts: readonly ConfigurationFact[];
}

export interface InferredConfiguration {
  readonly router: readonly ConfigurationFact[];
  readonly workers: readonly WorkerConfiguration[];
}

function stated(source: string | null): string {
  return source === null ? 'no source stated it' : `stated by ${source}`;
}

export function inferredConfiguration(input: DiagnosisInput): InferredConfiguration {
  const r = input.router;
  const tpbFrom =
    r.blockSize?.basis === 'inferred'
      ? "inferred from the routing: the only chunk size whose predicted matches the router's choices follow far above chance"
      : r.blockSize !== null
        ? stated(r.blockSize.from)
        : `unknown: candidates ${r.tokensPerBlockCandidates.join(', ')} (32 is TensorRT-LLM's default; newer routers adopt the workers' size) until enough decisions decide`;
  const router: ConfigurationFact[] = [
    {
      key: 'router type',
      value: r.type,
      from: r.type === null ? 'no source stated it; assumed kv_cache_aware (reads KV events)' : stated(r.source),
    },
    { key: 'tokens_per_block', value: r.blockSize === null ? null : String(r.blockSize.tokens), from: tpbFrom },
    {
      key: 'max_batch_size',
      value: r.maxBatchSize === null ? null : String(r.maxBatchSize),
      from: r.maxBatchSize === null ? 'no source stated it (the load term assumes the default)' : stated(r.source),
    },
    {
      key: 'backfill_block_hashes_on_finish',
      value: r.backfillBlockHashesOnFinish === null ? null : String(r.backfillBlockHashesOnFinish),
      from: r.backfillBlockHashesOnFinish === null ? 'no source stated it' : stated(r.source),
    },
    {
      key: 'reads KV events',
      value: r.readsEvents ?? (r.consumesEvents ? 'assumed (kind unknown)' : 'none'),
      from:
        r.readsEventsFrom === null
          ? 'nothing states or shows it: set router.type or router.reads_events'
          : r.readsEventsFrom === 'stated'
            ? 'router.reads_events in the configuration'
            : `from ${r.readsEventsFrom}`,
    },
    {
      key: 'vantage point',
      value: input.seesRouterPolls ? 'relay' : input.seesWorkerEvents ? 'exclusive drain' : 'watch',
      from: input.seesRouterPolls
        ? "the router's /kv_cache_events polls pass through kvsentinel's relay"
        : input.seesWorkerEvents
          ? "kvsentinel drains the workers' events itself"
          : 'kvsentinel reads logs and endpoints only (no KV events)',
    },
  ];
  const workers = input.servers.map((s): WorkerConfiguration => {
    const blockSize = s.advertisedBlockSize ?? s.inferredBlockSize;
    const checks = s.hashChecks.match + s.hashChecks.mismatch;
    const verified = checks > 0 ? `; ${s.hashChecks.match} of ${checks} stored blocks recomputed to the same hash` : '';
    return {
      server: s.server,
      facts: [
        {
          key: 'tokens_per_block',
          value: blockSize === null ? null : String(blockSize),
          from:
            s.advertisedBlockSize !== null
              ? 'stated by its /server_info'
              : s.inferredBlockSize !== null
                ? 'inferred: the longest stored block in its KV events'
                : 'unknown: no /server_info size and no stored events',
        },
        {
          key: 'hash algorithm',
          value: s.hashAlgo,
          from:
            (s.advertisedHashAlgo !== null
              ? 'stated by its /server_info'
              : s.eventsTotal > 0
                ? "its KV events' own, else TensorRT-LLM's default"
                : "TensorRT-LLM's default (nothing stated it)") + verified,
        },
        ...(s.alternativeHashAlgo !== null
          ? [
              {
                key: 'hash algorithm that matches instead',
                value: s.alternativeHashAlgo,
                from: 'recomputed from mismatching root blocks',
              },
            ]
          : []),
      ],
    };
  });
  return { router, workers };
}
