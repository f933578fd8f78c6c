// In-flight CTX requests per server, shared by all relays so each decision records the load on every server at the
// moment the router sent it (the router's own load term counts the same requests).

export class InflightTracker {
  readonly #counts = new Map<string, number>();

  register(server: string): void {
    if (!this.#counts.has(server)) this.#counts.set(server, 0);
  }

  unregister(server: string): void {
    this.#counts.delete(server);
  }

  inc(server: string): void {
    this.#counts.set(server, (this.#counts.get(server) ?? 0) + 1);
  }

  dec(server: string): void {
    const n = this.#counts.get(server);
    if (n !== undefined) this.#counts.set(server, Math.max(0, n - 1));
  }

  get(server: string): number {
    return this.#counts.get(server) ?? 0;
  }

  snapshot(): Record<string, number> {
    return Object.fromEntries(this.#counts);
  }
}
