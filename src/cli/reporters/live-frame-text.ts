// `kvsentinel tail`: one readable line per live-feed frame.
import type { ChalkInstance } from 'chalk';
import { formatClock, formatZone } from '../../outputs/time-text.js';

type Frame = Record<string, unknown> & { type?: unknown; ts?: unknown };

function time(ts: unknown): string {
  return typeof ts === 'number' && Number.isFinite(ts) ? formatClock(ts, { milliseconds: true }) : '--:--:--.---';
}

function pct(n: unknown): string {
  return typeof n === 'number' ? `${(n * 100).toFixed(1)}%` : 'n/a';
}

function str(v: unknown): string {
  return typeof v === 'string'
    ? v
    : typeof v === 'number' || typeof v === 'boolean'
      ? String(v)
      : v === null || v === undefined
        ? '-'
        : JSON.stringify(v);
}

export function formatLiveFrame(frame: Frame, c: ChalkInstance): string {
  const t = c.dim(time(frame.ts));
  switch (frame.type) {
    case 'hello':
      return `${t} connected to kvsentinel ${str(frame['version'])} (times are local, ${formatZone(typeof frame.ts === 'number' ? frame.ts : Date.now())})`;
    case 'decision': {
      const inflight =
        frame['inflight'] !== null && typeof frame['inflight'] === 'object'
          ? Object.entries(frame['inflight'] as Record<string, unknown>)
              .map(([k, v]) => `${k}=${str(v)}`)
              .join(',')
          : '-';
      let join = '';
      if (Array.isArray(frame['candidates'])) {
        const chosen = (frame['candidates'] as Frame[]).find((x) => x['server'] === frame['server']);
        const best = frame['chosen_is_oracle_best'];
        join =
          ` router-predicted=${str(chosen?.['predicted_tokens'])} held=${str(chosen?.['oracle_tokens'])}` +
          (best === true
            ? c.green(' oracle-best')
            : best === false
              ? c.yellow(
                  ` not-oracle-best (best: ${(frame['oracle_best'] as unknown[] | undefined)?.map(str).join(',') ?? '-'})`,
                )
              : '');
      }
      return `${t} ${c.cyan('decision')} ${str(frame['server'])} req=${str(frame['request_id'])} corr=${str(frame['correlation_id'])} prompt=${str(frame['prompt_token_count'])} inflight=${inflight}${join}`;
    }
    case 'outcome': {
      const prompt = frame['prompt_token_count'];
      const cached = frame['cached_token_count'];
      const ratio =
        typeof prompt === 'number' && typeof cached === 'number' && prompt > 0 ? ` (${pct(cached / prompt)})` : '';
      const latency = typeof frame['latency_ms'] === 'number' ? ` ${frame['latency_ms'].toFixed(1)}ms` : '';
      const oracle =
        frame['oracle_cached_token_count'] !== undefined
          ? ` best-possible=${str(frame['oracle_cached_token_count'])}`
          : '';
      const scattered = frame['scattered'] === true ? c.yellow(' scattered') : '';
      return `${t} ${frame['ok'] === true ? c.green('outcome ') : c.red('failed  ')} ${str(frame['server'])} req=${str(frame['request_id'])} cached=${str(cached)}/${str(prompt)}${ratio}${oracle}${latency}${scattered}`;
    }
    case 'finding': {
      const raised = frame['change'] === 'raised';
      const sev = str(frame['severity']);
      const sevText = sev === 'critical' ? c.red(sev) : sev === 'warning' ? c.yellow(sev) : sev;
      const servers =
        Array.isArray(frame['servers']) && frame['servers'].length > 0
          ? ` [${frame['servers'].map(str).join(',')}]`
          : '';
      return raised
        ? `${t} ${c.bold('RAISED')} ${sevText} ${str(frame['id'])}${servers}: ${str(frame['summary'])} — fix: ${str(frame['fix'])}`
        : `${t} ${c.bold('CLEARED')} ${str(frame['id'])}${servers}`;
    }
    case 'stats': {
      const servers = Array.isArray(frame['servers'])
        ? (frame['servers'] as Frame[])
            .map(
              (s) =>
                `${str(s['server'])}: blocks=${str(s['worker_blocks'])} router=${str(s['router_table_blocks'])} inflight=${str(s['inflight'])}`,
            )
            .join('; ')
        : '';
      return `${t} ${c.magenta('stats')} verdict=${str(frame['verdict'])} requests=${str(frame['requests'])} hit=${pct(frame['cache_hit_ratio'])} oracle=${pct(frame['oracle_hit_ratio'])} scatter=${pct(frame['turn_scatter_ratio'])}${servers !== '' ? ` | ${servers}` : ''}`;
    }
    case 'source':
      return `${t} source ${str(frame['source'])} ${frame['up'] === true ? c.green('up') : `${c.red('down')}: ${str(frame['error'])}`}`;
    default:
      return `${t} ${JSON.stringify(frame)}`;
  }
}
