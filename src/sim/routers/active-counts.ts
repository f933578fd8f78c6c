// Active-request bookkeeping shared by the routers: requests in flight per server, never below 0.
export class ActiveCounts {
  readonly #counts = new Map<string, number>();

  constructor(servers: readonly string[]) {
    for (const server of servers) this.#counts.set(server, 0);
  }

  get(server: string): number {
    return this.#counts.get(server) ?? 0;
  }

  increment(server: string): void {
    this.#counts.set(server, this.get(server) + 1);
  }

  decrement(server: string): void {
    this.#counts.set(server, Math.max(this.get(server) - 1, 0));
  }
}
