// A server's figures summed over its ranks, as the audit report and the live feed's stats frame both show them.
import type { ServerStats } from './snapshot.js';

export interface ServerTotals {
  /** events of every type */
  readonly events: number;
  readonly gaps: number;
  readonly resets: number;
  /** blocks held at every cache level */
  readonly workerBlocks: number;
}

const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);

export function serverTotals(server: Pick<ServerStats, 'ranks'>): ServerTotals {
  let events = 0;
  let gaps = 0;
  let resets = 0;
  let workerBlocks = 0;
  for (const r of server.ranks) {
    events += sum(Object.values(r.eventsByType));
    gaps += r.gaps;
    resets += r.resets;
    workerBlocks += sum(Object.values(r.blocksByLevel));
  }
  return { events, gaps, resets, workerBlocks };
}
