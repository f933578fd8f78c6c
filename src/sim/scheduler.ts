// The clock the simulator's model runs on. The model only ever asks "what time is it" and "call me at T";
// the virtual-time driver answers with a discrete-event heap, the live driver with real timers.

export interface Scheduler {
  /** current time in milliseconds (virtual: since the start of the run) */
  now(): number;
  /** runs `task` at `timeMs` (never earlier than now); tasks at the same time run in scheduling order */
  at(timeMs: number, task: () => void): void;
}

interface Entry {
  readonly time: number;
  readonly seq: number;
  readonly task: () => void;
}

function before(a: Entry, b: Entry): boolean {
  return a.time < b.time || (a.time === b.time && a.seq < b.seq);
}

/** Discrete-event scheduler: time jumps from one task to the next. */
export class VirtualScheduler implements Scheduler {
  #now = 0;
  #seq = 0;
  readonly #heap: Entry[] = [];

  now(): number {
    return this.#now;
  }

  at(timeMs: number, task: () => void): void {
    const entry: Entry = { time: Math.max(timeMs, this.#now), seq: this.#seq++, task };
    const heap = this.#heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  after(delayMs: number, task: () => void): void {
    this.at(this.#now + delayMs, task);
  }

  get pending(): number {
    return this.#heap.length;
  }

  #pop(): Entry | undefined {
    const heap = this.#heap;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined) return undefined;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && before(heap[l]!, heap[m]!)) m = l;
        if (r < heap.length && before(heap[r]!, heap[m]!)) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m]!, heap[i]!];
        i = m;
      }
    }
    return top;
  }

  /** runs one task; false when nothing is scheduled */
  step(): boolean {
    const entry = this.#pop();
    if (entry === undefined) return false;
    this.#now = entry.time;
    entry.task();
    return true;
  }

  /** runs tasks until none is left or the next one is later than `untilMs` */
  run(untilMs = Number.POSITIVE_INFINITY): void {
    while (this.#heap.length > 0 && this.#heap[0]!.time <= untilMs) this.step();
    if (Number.isFinite(untilMs) && untilMs > this.#now) this.#now = untilMs;
  }
}
