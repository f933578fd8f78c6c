// The daemon's log on stderr (stdout stays free for command output): one line per message, logfmt by default or
// one JSON object per line (--log.format json) for log pipelines.
import type { Logger } from '../../sources/ports.js';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['logfmt', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

function value(v: unknown): string {
  const s = typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
  return /[\s"=]/.test(s) ? JSON.stringify(s) : s;
}

export function createStderrLogger(
  options: { level?: LogLevel; format?: LogFormat; write?: (line: string) => void } = {},
): Required<Logger> {
  const min = LOG_LEVELS.indexOf(options.level ?? 'info');
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const json = options.format === 'json';
  const log = (level: LogLevel, message: string, fields?: Record<string, unknown>): void => {
    if (LOG_LEVELS.indexOf(level) < min) return;
    const ts = new Date().toISOString();
    if (json) {
      // ts, level and msg first and never overwritten by a field of the same name
      const head = { ts, level, msg: message };
      const rest = Object.entries(fields ?? {}).filter(([k]) => !(k in head));
      write(`${JSON.stringify({ ...head, ...Object.fromEntries(rest) })}\n`);
      return;
    }
    const extra = Object.entries(fields ?? {})
      .map(([k, v]) => ` ${k}=${value(v)}`)
      .join('');
    write(`ts=${ts} level=${level} msg=${value(message)}${extra}\n`);
  };
  return {
    debug: (m, f) => log('debug', m, f),
    info: (m, f) => log('info', m, f),
    warn: (m, f) => log('warn', m, f),
    error: (m, f) => log('error', m, f),
  };
}
