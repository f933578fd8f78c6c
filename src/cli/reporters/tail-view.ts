// What `kvsentinel tail` shows of the live feed: which frames (--only, --server), in timestamp order (frames are
// held briefly and released sorted, because the feed interleaves sources whose clocks run a little apart), and the
// one-screen summary (--summary) redrawn once a second.
import type { ChalkInstance } from 'chalk';
import { formatClock, formatRelative, formatZone } from '../../outputs/time-text.js';

export type Frame = Record<string, unknown> & { type?: unknown; ts?: unknown };

/** --only names → frame types */
export const TAIL_KINDS = {
  findings: 'finding',
  stats: 'stats',
  decisions: 'decision',
  outcomes: 'outcome',
  sources: 'source',
} as const;
export type TailKind = keyof typeof TAIL_KINDS;

export function parseOnly(text: string): Set<string> | string {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = names.filter((n) => !(n in TAIL_KINDS));
  if (names.length === 0 || unknown.length > 0)
    return `--only '${text}': expected a comma-separated list of ${Object.keys(TAIL_KINDS).join(', ')}`;
  return new Set(names.map((n) => TAIL_KINDS[n as TailKind]));
}

const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');

/** The frame as `--only` / `--server` want it, or null to leave it out. A stats frame keeps only that server's row. */
export function filterFrame(frame: Frame, only: ReadonlySet<string> | null, server: string | null): Frame | null {
  const type = str(frame.type);
  if (type === 'hello') return only === null ? frame : null;
  if (only !== null && !only.has(type)) return null;
  if (server === null) return frame;
  switch (type) {
    case 'decision':
    case 'outcome':
      return frame['server'] === server ? frame : null;
    case 'finding':
      return Array.isArray(frame['servers']) && frame['servers'].includes(server) ? frame : null;
    case 'stats':
      return {
        ...frame,
        servers: Array.isArray(frame['servers'])
          ? (frame['servers'] as Frame[]).filter((s) => s['server'] === server)
          : [],
      };
    case 'source':
      return str(frame['source']).endsWith(`:${server}`) ? frame : null;
    default:
      return frame;
  }
}

/**
 * Releases frames in timestamp order: each is held `holdMs` after it arrived, and released with every held frame
 * stamped no later than it. A frame arriving later than that still comes out (late, never dropped).
 */
export class TimestampOrder {
  readonly #holdMs: number;
  readonly #emit: (frame: Frame) => void;
  #held: { frame: Frame; ts: number; arrived: number; seq: number }[] = [];
  #seq = 0;

  constructor(holdMs: number, emit: (frame: Frame) => void) {
    this.#holdMs = holdMs;
    this.#emit = emit;
  }

  push(frame: Frame, now: number): void {
    const ts = typeof frame.ts === 'number' && Number.isFinite(frame.ts) ? frame.ts : Number.NEGATIVE_INFINITY;
    this.#held.push({ frame, ts, arrived: now, seq: this.#seq++ });
  }

  /** Releases what has been held long enough (everything with `all`). */
  flush(now: number, all = false): void {
    const due = this.#held.filter((h) => all || now - h.arrived >= this.#holdMs);
    if (due.length === 0) return;
    const upTo = Math.max(...due.map((h) => h.ts));
    const out = this.#held.filter((h) => all || h.ts <= upTo).sort((a, b) => a.ts - b.ts || a.seq - b.seq);
    const released = new Set(out);
    this.#held = this.#held.filter((h) => !released.has(h));
    for (const h of out) this.#emit(h.frame);
  }
}

interface ServerRow {
  server: string;
  worker_blocks?: unknown;
  router_table_blocks?: unknown;
  requests?: unknown;
  inflight?: unknown;
  router_polls?: unknown;
  events?: unknown;
  gaps?: unknown;
}

/** The state the summary screen shows, folded from frames. */
export class TailSummary {
  #stats: Frame | null = null;
  readonly #active = new Map<string, Frame>();
  readonly #changes: Frame[] = [];
  #decisions = 0;
  #outcomes = 0;
  #failed = 0;
  readonly #sourcesDown = new Map<string, string>();

  add(frame: Frame): void {
    switch (frame.type) {
      case 'stats':
        this.#stats = frame;
        break;
      case 'finding': {
        const key = `${str(frame['id'])}|${Array.isArray(frame['servers']) ? frame['servers'].join(',') : ''}`;
        if (frame['change'] === 'raised') this.#active.set(key, frame);
        else this.#active.delete(key);
        this.#changes.push(frame);
        if (this.#changes.length > 5) this.#changes.shift();
        break;
      }
      case 'decision':
        this.#decisions++;
        break;
      case 'outcome':
        this.#outcomes++;
        if (frame['ok'] !== true) this.#failed++;
        break;
      case 'source':
        if (frame['up'] === true) this.#sourcesDown.delete(str(frame['source']));
        else this.#sourcesDown.set(str(frame['source']), str(frame['error']));
        break;
      default:
        break;
    }
  }

  /** The screen; counts of decisions and outcomes are since the previous render. */
  render(target: string, c: ChalkInstance, now: number): string {
    const pct = (v: unknown): string => (typeof v === 'number' ? `${(v * 100).toFixed(1)}%` : 'n/a');
    const s = this.#stats;
    const verdict = str(s?.['verdict']) || 'waiting for the first stats frame';
    const verdictText =
      verdict === 'healthy'
        ? c.green(verdict)
        : verdict === 'inert'
          ? c.red(verdict)
          : verdict === 'degraded'
            ? c.yellow(verdict)
            : verdict;
    const lines = [
      `${c.bold('kvsentinel tail')} ${target}   ${formatClock(now)} ${formatZone(now)}`,
      `verdict ${verdictText}   requests ${str(s?.['requests']) || '-'}   hit ${pct(s?.['cache_hit_ratio'])}   oracle ${pct(s?.['oracle_hit_ratio'])}   turn scatter ${pct(s?.['turn_scatter_ratio'])}`,
      `last second: ${this.#decisions} decisions, ${this.#outcomes} outcomes${this.#failed > 0 ? c.red(` (${this.#failed} failed)`) : ''}`,
      '',
    ];
    const rows = Array.isArray(s?.['servers']) ? (s['servers'] as ServerRow[]) : [];
    if (rows.length > 0) {
      const head = [
        'server',
        'worker blocks',
        'router table',
        'requests',
        'in flight',
        'router polls',
        'events',
        'gaps',
      ];
      const body = rows.map((r) =>
        [
          r.server,
          r.worker_blocks,
          r.router_table_blocks,
          r.requests,
          r.inflight,
          r.router_polls,
          r.events,
          r.gaps,
        ].map((v) => str(v) || '-'),
      );
      const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
      const fmt = (cells: string[]): string =>
        cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
      lines.push(c.dim(fmt(head)), ...body.map(fmt), '');
    }
    lines.push(this.#active.size === 0 ? 'active findings: none' : 'active findings:');
    for (const f of this.#active.values()) {
      const sev = str(f['severity']);
      const servers = Array.isArray(f['servers']) && f['servers'].length > 0 ? ` [${f['servers'].join(',')}]` : '';
      lines.push(
        `  ${sev === 'critical' ? c.red(sev) : sev === 'warning' ? c.yellow(sev) : sev} ${str(f['id'])}${servers}: ${str(f['summary'])}`,
      );
    }
    if (this.#sourcesDown.size > 0) {
      lines.push('', 'sources down:');
      for (const [source, error] of this.#sourcesDown) lines.push(`  ${source}: ${error}`);
    }
    if (this.#changes.length > 0) {
      lines.push('', 'recent finding changes:');
      for (const f of this.#changes)
        lines.push(
          `  ${typeof f.ts === 'number' ? `${formatClock(f.ts)} (${formatRelative(f.ts, now)})` : '--:--:--'} ${str(f['change'])} ${str(f['id'])}`,
        );
    }
    this.#decisions = 0;
    this.#outcomes = 0;
    this.#failed = 0;
    return `${lines.join('\n')}\n`;
  }
}
