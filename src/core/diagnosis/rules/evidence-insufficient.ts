// evidence-insufficient: no all-clear without evidence. Neither cache-signal-inert holds nor does the window show
// routing following prefixes (routing-evidence.ts), so a quiet report would be a guess. Names what is missing and
// how to provide it; the verdict is then `unknown`, never `healthy`. A ZMQ stream joined after more than its replay
// buffer held is missing evidence too, whatever routing shows: worker truth lacks the blocks stored before, so the
// oracle cannot credit them and a router that misses them would pass, until the table has turned over. When that
// is the only reason (routing follows what the table shows), `history_only` lets another warning still read degraded.
import { REQUEST_UNREADABLE_REASONS, type RequestUnreadableReason } from '../../relay/request-unreadable.js';
import type { DiagnosisInput, Rule } from '../rule.js';
import { inertReasons } from './cache-signal-inert.js';
import { deadEventPath } from './event-path.js';
import { windowEvidence } from './rule-math.js';
import { followsPrefixes, routingEvidence } from './routing-evidence.js';

const UNREADABLE_FIX: Record<RequestUnreadableReason, string> = {
  unknown_encoding: 'send CTX bodies as JSON or msgpack without Content-Encoding (the relay decodes both)',
  malformed: 'check the client: the relay logs the first malformed body per server',
  too_large: 'raise relay.capture_max_bytes above the largest CTX request body',
  no_prompt: 'send prompt, prompt_token_ids or messages in each CTX request',
};

interface Missing {
  readonly what: string;
  readonly provide: string;
}

function missing(input: DiagnosisInput, unjudgeable: readonly string[]): Missing[] {
  const t = input.thresholds;
  const d = input.decisions;
  const out: Missing[] = [];
  // a source that cannot be read explains missing decisions better than "send traffic": name it first
  const down = input.sources.filter((s) => !s.up);
  if (down.length > 0 && d.decisions < t.minDecisions) {
    out.push({
      what: `${down.map((s) => s.source).join(', ')} cannot be read (source-unreachable)`,
      provide: `make ${down.map((s) => s.source).join(', ')} reachable from the sidecar (see source-unreachable)`,
    });
  }
  if (d.decisions < t.minDecisions) {
    out.push({
      what: `only ${d.decisions} routing decisions in the window (${t.minDecisions} needed)`,
      provide: 'send traffic through the router, or audit for longer (--duration)',
    });
  }
  const unreadable: Record<RequestUnreadableReason, number> = {
    unknown_encoding: 0,
    malformed: 0,
    too_large: 0,
    no_prompt: 0,
  };
  for (const s of input.servers) for (const r of REQUEST_UNREADABLE_REASONS) unreadable[r] += s.unreadableRequests[r];
  const unreadableTotal = REQUEST_UNREADABLE_REASONS.reduce((n, r) => n + unreadable[r], 0);
  if (unreadableTotal > 0 && d.withKeys < t.minDecisions) {
    const counts = REQUEST_UNREADABLE_REASONS.filter((r) => unreadable[r] > 0)
      .map((r) => `${r} ${unreadable[r]}`)
      .join(', ');
    out.push({
      what: `${unreadableTotal} CTX requests the relay could not read (${counts})`,
      provide: REQUEST_UNREADABLE_REASONS.filter((r) => unreadable[r] > 0)
        .map((r) => UNREADABLE_FIX[r])
        .join('; '),
    });
  }
  if (d.decisions > 0 && d.withKeys === 0 && input.seesWorkerEvents) {
    out.push({
      what: 'no request could be hashed: the CTX requests carried no prompt token ids the sidecar could read (text or chat prompts, or bodies in an encoding it did not decode)',
      provide:
        "send token ids in the CTX request (prompt as token ids, or prompt_token_ids), or give the sidecar the model's tokenizer; check kvsentinel_relay_requests_unreadable_total for the reason",
    });
  }
  if (d.decisions > 0 && d.inflightReports === 0) {
    out.push({
      what: 'no in-flight counts per server at decision time, so routing cannot be compared with a load-only router',
      provide: 'run the sidecar in relay mode (--relay ID=URL@PORT): it counts in-flight requests per server',
    });
  }
  if (d.decisions >= t.minDecisions && d.followups === 0) {
    out.push({
      what: 'no follow-up turns recognised: requests carry no trajectory id',
      provide: 'send X-Correlation-ID (or a conversation id) with every turn of a trajectory',
    });
  }
  if (input.seesWorkerEvents && input.servers.every((s) => s.storedEvents === 0) && d.decisions > 0) {
    out.push({
      what: "no KV events: where prefixes are cached is known only from which server served a trajectory's earlier turns",
      provide: 'enable KV events on the workers (kv_cache_config.event_buffer_max_size > 0)',
    });
  }
  const p = d.preference;
  const informative = p.truth.away.decisions + p.truth.tie.decisions + p.turn.away.decisions + p.turn.tie.decisions;
  if (d.decisions >= t.minDecisions && d.inflightReports > 0 && informative < t.minPreferenceDecisions) {
    out.push({
      what: `only ${informative} decisions where a load-only router and a cache-aware one would choose differently`,
      provide: 'audit for longer, or under more load (more requests in flight)',
    });
  }
  for (const h of incompleteHistory(input)) out.push(h);
  for (const u of unjudgeable)
    out.push({
      what: u,
      provide: 'run in relay mode, where in-flight counts separate a load-only router from a cache-aware one',
    });
  if (out.length === 0)
    out.push({
      what: 'the window shows no decision that tells a cache-aware router from a blind one',
      provide: 'audit for longer',
    });
  return out;
}

function incompleteHistory(input: DiagnosisInput): Missing[] {
  return input.servers.flatMap((s) =>
    s.historyIncomplete.map((h) => ({
      what:
        `${s.server} rank ${h.rank}: KV history incomplete since ${new Date(h.since).toISOString()} ` +
        `(joined after ${h.missingBatches} batches it could not replay; what they stored is unknown)`,
      provide:
        s.kvCapacity === null || s.kvCapacity.from === 'observed peak residency'
          ? `state ${s.server}'s kv_capacity_blocks (vLLM logs its GPU blocks at start) so kvsentinel can tell when the table has turned over, or wait for a cache clear or restart; raise the publisher's buffer_steps so a restarted kvsentinel can replay what it missed`
          : `wait until ${s.server} has removed ${Math.ceil(s.kvCapacity.blocks / Math.max(1, s.ranks.length))} blocks since (removed ${h.removedSince}) and its table has turned over; raise the publisher's buffer_steps so a restarted kvsentinel can replay what it missed`,
    })),
  );
}

const historyEvidence = (input: DiagnosisInput): string =>
  input.servers
    .flatMap((s) => s.historyIncomplete.map((h) => `${s.server}/rank${h.rank}:${new Date(h.since).toISOString()}`))
    .join(' ');

export const evidenceInsufficient: Rule = {
  id: 'evidence-insufficient',
  evaluate(input) {
    const routing = routingEvidence(input);
    if (inertReasons(input) !== null) return null;
    const history = historyEvidence(input);
    if (followsPrefixes(routing) && history === '') return null;
    const gaps = missing(input, routing.chanceUnjudgeable);
    const dead = deadEventPath(input);
    return {
      servers: input.servers.map((s) => s.server),
      summary:
        `cannot tell whether routing follows the prefix cache: ${gaps.map((g) => g.what).join('; ')}` +
        (dead !== null
          ? ` (and ${dead.causes.join('; ')}: unless the router fills its table itself — backfill, routed-block tracking, a conversation pin — it routes by load alone)`
          : ''),
      evidence: {
        decisions: input.decisions.decisions,
        decisions_with_keys: input.decisions.withKeys,
        decisions_with_inflight: input.decisions.inflightReports,
        followup_turns: input.decisions.followups,
        missing: gaps.length,
        router_profile: input.router.profile ?? 'unknown',
        ...(history !== '' ? { history_incomplete_since: history } : {}),
        // routing shows it follows the prefixes it can see: only the missing history withholds the all-clear, so a
        // warning elsewhere still makes the verdict degraded (the state reads this)
        ...(history !== '' && followsPrefixes(routing) ? { history_only: true } : {}),
        ...windowEvidence(input.window),
      },
      cause:
        'docs/design.md §5: the verdict needs routing decisions that show whether the router follows the prefix cache; without them the audit cannot clear or blame the router',
      fix: gaps.map((g) => g.provide).join('; '),
    };
  },
};
