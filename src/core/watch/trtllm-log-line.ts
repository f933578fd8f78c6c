// One line of TensorRT-LLM's Python logger (tensorrt_llm/logger.py; docs/orchestrator-log.md). The newest logger
// never %-formats: `log(severity, *msg)` joins `[TRT-LLM]`, the severity tag, the caller's module padded to 8
// characters (`[serve   ]`), an optional `[RANK n]` and every argument with single spaces, under Python logging's
// `[%m/%d/%Y-%H:%M:%S] ` prefix. Older loggers wrote `[TRT-LLM] [I] message` or `[TRT-LLM] [MPI_Rank n] [I] message`.
// A %-style call site therefore prints its format string followed by its values; an f-string one prints the text.

export interface TrtllmLogLine {
  /** the severity letter (I, W, E, F, V, D) */
  readonly level: string;
  /** the module tag without its padding (`serve`), null when the line has none */
  readonly module: string | null;
  readonly rank: number | null;
  /** the message with a %-style call site's values put back in place */
  readonly message: string;
}

// [time] [TRT-LLM] ([MPI_Rank n] )?[X] ([module8] )?([RANK n] )?message — time optional (a log shipper may strip it)
const PREFIX =
  /^(?:\[\d{2}\/\d{2}\/\d{4}-\d{2}:\d{2}:\d{2}\] )?\[TRT-LLM\] (?:\[MPI_Rank (\d+)\] )?\[([FEWIVD])\] (?:\[(?!RANK \d)([^\]]{8})\] )?(?:\[RANK (\d+)\] )?/;

/**
 * The %-style call sites of router.py whose lines kvsentinel reads (both the intermediate and the newest version):
 * printed raw as the format string, then each value after a space.
 */
export const PERCENT_CALL_SITES: readonly string[] = [
  "router tokens_per_block unset: adopting worker's %d on %s",
  'tokens_per_block mismatch on %s: router=%d worker=%d. KV events from worker cannot align with router block hashes; skipping event polling and relying on routed-block tracking for hit rate.',
];

const SPECIFIER = /%[ds]/;

function specifiers(format: string): string[] {
  return format.match(new RegExp(SPECIFIER.source, 'g')) ?? [];
}

/** `format` with `args` in place of its %d/%s, as Python's % operator would have printed it. */
export function percentFormat(format: string, args: readonly (string | number)[]): string {
  let i = 0;
  return format.replace(new RegExp(SPECIFIER.source, 'g'), () => String(args[i++] ?? ''));
}

/** A raw %-style line (format string, then values) back to the text it means; other messages unchanged. */
export function unrawPercent(message: string): string {
  for (const format of PERCENT_CALL_SITES) {
    if (!message.startsWith(`${format} `)) continue;
    const values = message
      .slice(format.length + 1)
      .trim()
      .split(/\s+/);
    const wanted = specifiers(format);
    if (values.length !== wanted.length) continue;
    if (wanted.some((spec, i) => spec === '%d' && !/^-?\d+$/.test(values[i]!))) continue;
    return percentFormat(format, values);
  }
  return message;
}

/** The parts of a TensorRT-LLM logger line; null when the line has no `[TRT-LLM] [X]` prefix. */
export function splitTrtllmLogLine(line: string): TrtllmLogLine | null {
  const m = PREFIX.exec(line);
  if (m === null) return null;
  const rank = m[4] ?? m[1];
  return {
    level: m[2] as string,
    module: m[3] !== undefined ? m[3].trimEnd() : null,
    rank: rank !== undefined ? Number(rank) : null,
    message: unrawPercent(line.slice(m[0].length)),
  };
}

/** The message of a log line: the logger's prefix removed and a raw %-style call site formatted; else the line. */
export function orchestratorLogMessage(line: string): string {
  return splitTrtllmLogLine(line)?.message ?? unrawPercent(line);
}
