// By which path each server's KV events reach the sidecar and the router: a ZMQ stream (subscribed, and the
// engine and hashes of those that delivered), the pull path (drained by a relay or polled by the router), and
// whether the router's replica was filled from a stream while no pull path was seen. The worker-events and
// router-deliveries reducers report what they see through its methods; projections read it through EventPathsView.
import type { StreamOrigin } from '../stream/stream-engine.js';
import type { SentinelMode } from './sentinel-options.js';

/** What the projections read of the event paths. */
export interface EventPathsView {
  /** worker events are seen at all: a relay's or an exclusive drainer's vantage point, or any drain, poll or stream */
  seesWorkerEvents(mode: SentinelMode): boolean;
  readonly seesRouterPolls: boolean;
  /** the server's ZMQ stream is subscribed */
  streamed(server: string): boolean;
  streamOrigin(server: string): StreamOrigin | null;
  /** the engine and hashes of every server whose stream delivered, by server name */
  streamOrigins(): readonly (readonly [string, StreamOrigin])[];
}

export class EventPaths implements EventPathsView {
  readonly #streamServers = new Set<string>();
  readonly #origins = new Map<string, StreamOrigin>();
  readonly #pullServers = new Set<string>();
  /** servers whose replica was filled from their stream (no pull path seen yet) */
  readonly #replicaStreamed = new Set<string>();
  #sawDrain = false;
  #sawStream = false;
  #sawRouterPoll = false;

  /** A stream sequence observation: some stream is subscribed; `subscribed` names the server's. */
  streamSeen(server: string, subscribed: boolean): void {
    this.#sawStream = true;
    if (subscribed) this.#streamServers.add(server);
  }

  /**
   * Worker events arrived, streamed (with their origin) or drained. Returns whether they fill the router's replica
   * at once: a stream reaches every subscriber, so a router that reads it (no pull path seen) holds the same.
   */
  workerEvents(server: string, origin: StreamOrigin | null): boolean {
    if (origin === null) {
      this.#sawDrain = true;
      this.#pullServers.add(server);
      return false;
    }
    this.#sawStream = true;
    if (!this.#origins.has(server)) this.#origins.set(server, origin);
    return !this.#pullServers.has(server);
  }

  /** The replica is being filled from the server's stream; true the first time (it needs a `created` event). */
  fillReplicaFromStream(server: string): boolean {
    if (this.#replicaStreamed.has(server)) return false;
    this.#replicaStreamed.add(server);
    return true;
  }

  /**
   * The router polled the server's pull path. Returns whether the replica had been filled from the server's
   * stream: that is not the router's view, and the caller clears it.
   */
  routerPolled(server: string): boolean {
    this.#sawRouterPoll = true;
    this.#pullServers.add(server);
    return this.#replicaStreamed.delete(server);
  }

  seesWorkerEvents(mode: SentinelMode): boolean {
    // a relay reports the router's polls even when every drain was empty
    return (
      mode === 'relay' ||
      mode === 'exclusive' ||
      (mode === 'auto' && (this.#sawDrain || this.#sawRouterPoll || this.#sawStream))
    );
  }

  get seesRouterPolls(): boolean {
    return this.#sawRouterPoll;
  }

  streamed(server: string): boolean {
    return this.#streamServers.has(server);
  }

  streamOrigin(server: string): StreamOrigin | null {
    return this.#origins.get(server) ?? null;
  }

  streamOrigins(): readonly (readonly [string, StreamOrigin])[] {
    return [...this.#origins].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }
}
