// The "meanwhile" advice of the findings whose cure is the event path: how the running router can fill its own table
// until then, in the words of its version and engine. The 2026-06 router reads router_args
// backfill_block_hashes_on_finish; the newest accepts it through **kwargs and ignores it (routed-block tracking,
// on by default, replaces it); a vLLM/SGLang deployment has no TensorRT-LLM router_args at all.
import type { DiagnosisInput } from '../rule.js';

/** the serving servers all publish their events on vLLM or SGLang ZMQ streams */
export function streamEngineDeployment(input: DiagnosisInput): boolean {
  const serving = input.servers.filter((s) => s.requests > 0 || s.outcomes > 0);
  return serving.length > 0 && serving.every((s) => s.streamEngine === 'vllm' || s.streamEngine === 'sglang');
}

/** The setting that makes this router add its own hashes, e.g. to follow "meanwhile "; null when none applies. */
export function ownTableSetting(input: DiagnosisInput): string | null {
  if (streamEngineDeployment(input)) return null;
  if (input.router.profile === 'newest')
    return input.router.trackRoutedBlocks === false
      ? 'router_args.track_routed_blocks: true (the newest router ignores backfill_block_hashes_on_finish)'
      : null;
  return 'router_args.backfill_block_hashes_on_finish: true';
}

/** `text` followed by `joiner` and the setting, or `text` alone when the router has none to turn on. */
export function withOwnTable(input: DiagnosisInput, text: string, joiner: string, after = ''): string {
  const setting = ownTableSetting(input);
  return setting === null ? text : `${text}${joiner}${setting}${after}`;
}
