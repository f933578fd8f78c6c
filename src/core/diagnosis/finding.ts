// What the diagnosis reports: a finding that holds, with the numbers behind it, its cause and its fix. The state's
// snapshots carry them; the outputs and the audit report show them.
import type { FindingId, Severity } from './finding-catalog.js';

export interface Finding {
  readonly id: FindingId;
  readonly severity: Severity;
  /** servers the finding is about (empty for cluster-wide findings) */
  readonly servers: readonly string[];
  /** one line a person reads first */
  readonly summary: string;
  /** numbers behind the finding, e.g. { requests: 1200, drains_empty: 40 }; never prompt content */
  readonly evidence: Readonly<Record<string, number | string | boolean>>;
  /** the cause it points to (docs/trtllm-wire.md §7), e.g. "§7.1 pull path returns [] by construction" */
  readonly cause: string;
  /** the configuration change that fixes it, as exact keys and values */
  readonly fix: string;
  /** first time the finding held, ms */
  readonly since: number;
}
