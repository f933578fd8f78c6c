// Items of a response that parsed, grouped into runs of consecutive positions: a bad item between two good ones
// splits them, so an observation's firstSeq + offset stays the item's exact sequence number in the response.
export interface IndexedItem<T> {
  readonly event: T;
  readonly index: number;
}

export interface ConsecutiveRun<T> {
  /** position of the run's first item in the response */
  readonly start: number;
  readonly events: T[];
}

export function consecutiveRuns<T>(items: Iterable<IndexedItem<T>>): ConsecutiveRun<T>[] {
  const runs: ConsecutiveRun<T>[] = [];
  let current: ConsecutiveRun<T> | null = null;
  let prev = -2;
  for (const { event, index } of items) {
    if (current === null || index !== prev + 1) {
      current = { start: index, events: [] };
      runs.push(current);
    }
    current.events.push(event);
    prev = index;
  }
  return runs;
}
