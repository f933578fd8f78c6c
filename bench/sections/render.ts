// §8 Render parity: what --tokenizer costs. A 40k-token agentic chat request (tool schemas, tool calls and outputs)
// rendered with the DeepSeek-V3 tokenizer and chat template the way the router does, inline and through the render
// thread the relay uses; and the relay's forwarding latency for that request with and without a tokenizer.
import { runNodeTask } from '../lib/proc.js';
import { fmtBytes, fmtMs, fmtRatio, statusOf, type RunConfig, type SectionReport } from '../lib/report.js';
import { median } from '../lib/stats.js';
import type { RenderParams, RenderResult } from '../tasks/render.js';

const TITLE = '8. Render parity (--tokenizer)';

export async function renderSection(config: RunConfig): Promise<SectionReport> {
  const params: RenderParams = {
    targetTokens: 40_000,
    samples: config.quick ? 10 : 30,
    relaySamples: config.quick ? 10 : 40,
  };
  const runs: RenderResult[] = [];
  for (let run = 0; run < config.slowRuns; run++) runs.push(await runNodeTask<RenderResult>('render', params));
  const m = (pick: (r: RenderResult) => number): number => median(runs.map(pick));
  const first = runs[0]!;
  const cold = m((r) => r.coldP50Ms);
  const followUp = m((r) => r.followUpP50Ms);
  const thread = m((r) => r.threadP50Ms);
  const plain = m((r) => r.relayPlainP50Ms);
  const withRender = m((r) => r.relayRenderP50Ms);
  // forwarding counts as unchanged within 10% or 0.5 ms of the same run's relay without a tokenizer
  const unchanged = withRender <= Math.max(plain * 1.1, plain + 0.5);
  return {
    id: 'render',
    title: TITLE,
    method:
      `One child process per run (${runs.length} runs; each figure the median over runs of per-run medians of ${params.samples} sequential renders). ` +
      `The request: an agentic conversation of ${first.messages} messages with 4 tool schemas, ${fmtBytes(first.bodyBytes)} of JSON, ${first.tokens.toLocaleString('en-US')} DeepSeek-V3 tokens, ` +
      'rendered as the render thread does (JSON decode, chat template by @huggingface/jinja, encode by the tokenizers binding in pieces between added tokens, cached). ' +
      '"Follow-up" is the next turn of a conversation rendered before (the previous context plus a new tool output and user message, new text every sample): ' +
      'the common case of agentic traffic, where only the new messages are encoded. "Cold" is a tokenizer that never saw the conversation. ' +
      '"Thread" adds the copy to the render thread and the ids back, as the relay calls it. The relay rows post follow-up requests to an instant worker ' +
      `directly and through two relays, one without and one with --tokenizer (${params.relaySamples} interleaved samples per run, paced so the renders keep up).`,
    rows: [
      {
        measurement: '40k-token chat request, follow-up turn: render, p50',
        result: fmtMs(followUp),
        baseline: `cold ${fmtMs(cold)}`,
        ratio: fmtRatio(cold / followUp),
        target: "≤ 50 ms (the router's own figure)",
        status: statusOf(followUp <= 50),
      },
      {
        measurement: '… through the render thread (relay path), p50',
        result: fmtMs(thread),
        baseline: '—',
        ratio: '—',
        target: '≤ 50 ms',
        status: statusOf(thread <= 50),
      },
      {
        measurement: '… cold (first sight of the conversation), p50',
        result: fmtMs(cold),
        baseline: `whole-string encode ${fmtMs(m((r) => r.wholeEncodeP50Ms))}`,
        ratio: '—',
        target: '≤ 50 ms',
        status: statusOf(cold <= 50),
      },
      {
        measurement: '… p99 (follow-up inline / thread)',
        result: `${fmtMs(m((r) => r.followUpP99Ms))} / ${fmtMs(m((r) => r.threadP99Ms))}`,
        baseline: '—',
        ratio: '—',
        target: '—',
        status: 'info',
      },
      {
        measurement: 'relay forwarding of that request with --tokenizer, p50',
        result: fmtMs(withRender),
        baseline: `without ${fmtMs(plain)} (direct ${fmtMs(m((r) => r.directP50Ms))})`,
        ratio: fmtRatio(withRender / plain),
        target: 'unchanged (≤ +10% or +0.5 ms)',
        status: statusOf(unchanged),
      },
      {
        measurement: '… p99 with / without',
        result: `${fmtMs(m((r) => r.relayRenderP99Ms))} / ${fmtMs(m((r) => r.relayPlainP99Ms))}`,
        baseline: '—',
        ratio: '—',
        target: '—',
        status: 'info',
      },
    ],
    notes: [
      `Every relayed request was rendered: ${runs.map((r) => r.rendered).join(', ')} per run (${params.relaySamples} measured + 5 warm-up).`,
    ],
  };
}
