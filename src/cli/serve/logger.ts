// The daemon's log: one logfmt line per message on stderr (stdout stays free for command output).
import type { Logger } from '../../sources/ports.js';

function value(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v) ?? String(v);
  return /[\s"=]/.test(s) ? JSON.stringify(s) : s;
}

export function createStderrLogger(options: { level?: 'info' | 'warn' | 'error'; write?: (line: string) => void } = {}): Logger {
  const levels = { info: 0, warn: 1, error: 2 } as const;
  const min = levels[options.level ?? 'info'];
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const log = (level: keyof typeof levels, message: string, fields?: Record<string, unknown>): void => {
    if (levels[level] < min) return;
    const extra = Object.entries(fields ?? {})
      .map(([k, v]) => ` ${k}=${value(v)}`)
      .join('');
    write(`ts=${new Date().toISOString()} level=${level} msg=${value(message)}${extra}\n`);
  };
  return {
    info: (m, f) => log('info', m, f),
    warn: (m, f) => log('warn', m, f),
    error: (m, f) => log('error', m, f),
  };
}
