// render-drift: the token ids the router hashes for text and chat requests (its own render with the model's
// tokenizer and chat template, or the ids a request carried) differ from the ids the worker tokenized
// (`prompt_token_ids` of its context-only response). Every block from the first difference on hashes differently,
// so the router's lookups miss what the workers hold (docs/trtllm-wire.md §7.3). Critical when the difference costs most
// of the matches (it falls early in the prompt), a warning when only the tail differs. Evidence: positions and ids.
import { withOwnTable } from './own-table-advice.js';
import type { RenderDriftCause, RenderSide } from '../../render/compare-renders.js';
import type { DiagnosisInput, Rule } from '../rule.js';
import { percent, ratio, round3, windowEvidence } from './rule-math.js';

const CAUSES: Record<RenderDriftCause, (side: RenderSide | null) => string> = {
  'doubled-bos': (side) =>
    `BOS twice on the ${side ?? 'one'} side: a rendered string encoded with special tokens again, a template that writes bos_token twice, or a text prompt that already starts with the BOS text`,
  'missing-bos': (side) =>
    `no BOS on the ${side ?? 'one'} side: add_bos_token or the chat template's bos_token differ between the tokenizer files each side loads`,
  'generation-prompt': (side) =>
    `only the tail differs (the ${side ?? 'one'} side has more): add_generation_prompt differs between the router's render and the worker's, or a template's closing text`,
  tools: (side) =>
    `tool schemas rendered on the ${side ?? 'one'} side only (tools dropped or converted before the other side renders)`,
  'space-handling': () =>
    "spaces tokenized differently: a byte-level pre-tokenizer on one side, Metaspace on the other (transformers ≥ 5 loads DeepSeek-V3 with Metaspace unless TensorRT-LLM's maybe_fix_byte_level_tokenizer runs)",
  template: () =>
    "a different chat template or tokenizer version (tokenizer_config.json / chat_template.jinja / tokenizer.json differ between the router's model path and the workers')",
};

export function renderDriftHolds(input: DiagnosisInput): boolean {
  const r = input.render;
  return (
    r.compared >= input.thresholds.minRenderChecks &&
    ratio(r.differing, r.compared) > input.thresholds.maxRenderDriftShare
  );
}

/** The leading cause in words, with the first diverging position; null while render-drift does not hold. */
export function renderDriftSummary(input: DiagnosisInput): string | null {
  if (!renderDriftHolds(input)) return null;
  const r = input.render;
  const top = r.causes[0];
  const where = r.sample !== null ? `first difference at token ${r.sample.diff.position}` : 'ids differ';
  return `render-drift: ${percent(ratio(r.differing, r.compared))} of requests, ${where}${top !== undefined ? `; likely ${CAUSES[top.cause](top.side)}` : ''}`;
}

export const renderDrift: Rule = {
  id: 'render-drift',
  evaluate(input) {
    if (!renderDriftHolds(input)) return null;
    const t = input.thresholds;
    const r = input.render;
    const critical = ratio(r.breaking, r.compared) >= t.renderBreakingCriticalShare;
    const top = r.causes[0];
    const sample = r.sample;
    const evidence: Record<string, number | string | boolean> = {
      requests_compared: r.compared,
      router_ids_from:
        r.rendered === r.compared
          ? 'tokenizer'
          : r.rendered === 0
            ? 'request'
            : `tokenizer ${r.rendered}, request ${r.compared - r.rendered}`,
      differing_share: round3(ratio(r.differing, r.compared)),
      matches_mostly_lost_share: round3(ratio(r.breaking, r.compared)),
      first_block_differs_share: round3(ratio(r.firstBlock, r.compared)),
      causes: r.causes.map((c) => `${c.cause}${c.side !== null ? `/${c.side}` : ''}: ${c.requests}`).join(', '),
      ...windowEvidence(input.window),
    };
    if (r.minPosition !== null) evidence.earliest_diverging_position = r.minPosition;
    if (sample !== null) {
      const d = sample.diff;
      evidence.first_diverging_position = d.position;
      evidence.sample_server = sample.server;
      evidence.router_prompt_tokens = d.routerLength;
      evidence.worker_prompt_tokens = d.workerLength;
      evidence.router_only_ids = d.routerSpan;
      evidence.worker_only_ids = d.workerSpan;
      evidence.common_suffix_ids = d.commonSuffix;
      // ids only, never text: the operator decodes them with the model's tokenizer if needed
      if (d.routerWindow.length > 0 || d.workerWindow.length > 0) {
        evidence.router_ids_from_position = `${d.windowFrom}: ${d.routerWindow.join(',')}`;
        evidence.worker_ids_from_position = `${d.windowFrom}: ${d.workerWindow.join(',')}`;
      }
    }
    const likely = top !== undefined ? CAUSES[top.cause](top.side) : 'unknown';
    evidence.likely_cause = top !== undefined ? `${top.cause}${top.side !== null ? `/${top.side}` : ''}` : 'unknown';
    return {
      severity: critical ? 'critical' : 'warning',
      servers: r.differingServers.length > 0 ? r.differingServers : input.servers.map((s) => s.server),
      summary:
        `the router's token ids differ from the workers' for ${percent(ratio(r.differing, r.compared))} of ${r.compared} requests` +
        (sample !== null ? `, first at token ${sample.diff.position}` : '') +
        (critical
          ? ': its lookups miss the prefixes the workers hold'
          : ': only the tail differs, most blocks still match'),
      evidence,
      cause: `docs/trtllm-wire.md §7.3 (router token ids ≠ worker token ids); likely ${likely}`,
      fix:
        'render once: a TensorRT-LLM orchestrator that writes its prompt_token_ids into the request (the workers then skip their own tokenization), ' +
        'or the same tokenizer folder (tokenizer.json, tokenizer_config.json, chat_template.jinja) and TensorRT-LLM/transformers versions for the router ' +
        withOwnTable(
          input,
          '(router tokenizer_dir / model) and the CTX workers; clients send the same add_generation_prompt and tools to both',
          '; until then ',
          ' (self-consistent router hashes)',
        ),
    };
  },
};
