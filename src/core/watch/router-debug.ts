// The optional router debug endpoint (docs/design.md §8): `GET /debug/router?since=SEQ` →
// {router:{type, tokens_per_block, max_batch_size, backfill_block_hashes_on_finish},
//  servers:[{url, active_requests, hash_algo, block_table_size, polls, poll_failures}],
//  decisions:[{seq, ts, request_id, correlation_id, chosen, candidates:[{server, matched_tokens, active_requests, score}]}]}
// Parsed losslessly (request ids may be 64-bit); a bad server or decision entry is skipped with an issue.
import type { Observation, RouterScoreObservation } from '../observe/observation.js';
import { FieldReader, parseRootObject } from '../wire/json-fields.js';
import { isHashAlgo } from '../wire/kv-event.js';
import { isJsonObject, type JsonObject } from '../wire/lossless-json.js';
import type { WireIssue } from '../wire/wire-issue.js';
import type { ServerResolver } from './server-resolver.js';

export interface RouterDebugParse {
  readonly observations: Observation[];
  /** highest decision seq seen (the next `since`), or null when there were none */
  readonly maxSeq: number | null;
  readonly issues: WireIssue[];
}

/** Epoch seconds (float) or milliseconds → ms. */
export function toEpochMs(value: number): number {
  return value < 1e11 ? value * 1000 : value;
}

export function parseRouterDebug(
  text: string,
  now: number,
  resolve: ServerResolver,
  since: number | null,
): RouterDebugParse {
  const issues: WireIssue[] = [];
  const observations: Observation[] = [];
  const root = parseRootObject(text, 'the router debug document', issues);
  if (root === null) return { observations, maxSeq: null, issues };
  const read = new FieldReader(text, issues);

  const servers: string[] = [];
  const serverList = root['servers'];
  if (Array.isArray(serverList)) {
    serverList.forEach((s, i) => {
      if (!isJsonObject(s)) return read.issue('wrong-type', 'must be an object', ['servers', i]);
      const path = ['servers', i];
      const url = read.str(s, 'url', path);
      if (url === null) return read.issue('missing-field', 'url is required', path);
      const server = resolve(url);
      servers.push(server);
      const algo = read.str(s, 'hash_algo', path);
      observations.push({
        kind: 'router-state',
        ts: now,
        server,
        activeRequests: read.uint(s, 'active_requests', path),
        hashAlgo: isHashAlgo(algo) ? algo : null,
        blockTableSize: read.uint(s, 'block_table_size', path),
        polls: read.uint(s, 'polls', path),
        pollFailures: read.uint(s, 'poll_failures', path),
      });
    });
  } else if (serverList !== undefined) read.issue('wrong-type', 'must be an array', ['servers']);

  const router = read.obj(root, 'router', []);
  if (router !== null) {
    const backfill = router['backfill_block_hashes_on_finish'];
    observations.unshift({
      kind: 'router-config',
      ts: now,
      source: 'debug-endpoint',
      routerType: read.str(router, 'type', ['router']),
      tokensPerBlock: read.uint(router, 'tokens_per_block', ['router']),
      maxBatchSize: read.uint(router, 'max_batch_size', ['router']),
      backfillBlockHashesOnFinish: typeof backfill === 'boolean' ? backfill : null,
      servers: servers.length > 0 ? servers : null,
    });
  }

  let maxSeq: number | null = null;
  const decisions = root['decisions'];
  if (Array.isArray(decisions)) {
    decisions.forEach((d, i) => {
      const path = ['decisions', i];
      if (!isJsonObject(d)) return read.issue('wrong-type', 'must be an object', path);
      const score = readDecision(read, d, path, now, resolve);
      if (score === null) return;
      maxSeq = Math.max(maxSeq ?? score.seq, score.seq);
      // a router that ignores `since` must not make us apply a decision twice
      if (since === null || score.seq > since) observations.push(score);
    });
  } else if (decisions !== undefined) read.issue('wrong-type', 'must be an array', ['decisions']);
  return { observations, maxSeq, issues };
}

function readDecision(
  read: FieldReader,
  d: JsonObject,
  path: (string | number)[],
  now: number,
  resolve: ServerResolver,
): RouterScoreObservation | null {
  const seq = read.uint(d, 'seq', path);
  const chosen = read.str(d, 'chosen', path);
  const requestId = read.id(d, 'request_id', path);
  if (seq === null || chosen === null || requestId === null) {
    read.issue('missing-field', 'seq, request_id and chosen are required', path);
    return null;
  }
  const ts = read.num(d, 'ts', path);
  const candidates: RouterScoreObservation['candidates'][number][] = [];
  const list = d['candidates'];
  if (Array.isArray(list)) {
    list.forEach((c, k) => {
      const cp = [...path, 'candidates', k];
      if (!isJsonObject(c)) return read.issue('wrong-type', 'must be an object', cp);
      const server = read.str(c, 'server', cp);
      const matchedTokens = read.uint(c, 'matched_tokens', cp);
      const activeRequests = read.uint(c, 'active_requests', cp);
      const score = read.num(c, 'score', cp);
      if (server === null || matchedTokens === null || activeRequests === null || score === null)
        return read.issue('missing-field', 'server, matched_tokens, active_requests and score are required', cp);
      candidates.push({ server: resolve(server), matchedTokens, activeRequests, score });
    });
  }
  return {
    kind: 'router-score',
    ts: ts !== null ? toEpochMs(ts) : now,
    seq,
    requestId: String(requestId),
    correlationId: read.str(d, 'correlation_id', path),
    chosen: resolve(chosen),
    candidates,
  };
}
