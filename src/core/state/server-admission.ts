// The state's bound on distinct CTX servers: every per-server table and counter hangs off one, so observations
// about servers past the cap are ignored (counted), and lists that name them are cut to the admitted ones.
import type { Observation } from '../observe/observation.js';

export class ServerAdmission {
  readonly #admitted = new Set<string>();
  readonly #max: number;
  #ignored = 0;

  constructor(maxServers: number) {
    this.#max = maxServers;
  }

  /** observations ignored because they named a server past the cap */
  get ignored(): number {
    return this.#ignored;
  }

  /** The observation as far as it concerns admitted servers; null (counted) when it is about a server past the cap. */
  admit(obs: Observation): Observation | null {
    const admitted = this.#withinCap(obs);
    if (admitted === null) this.#ignored++;
    return admitted;
  }

  #admit(server: string): boolean {
    if (this.#admitted.has(server)) return true;
    if (this.#admitted.size >= this.#max) return false;
    this.#admitted.add(server);
    return true;
  }

  #withinCap(obs: Observation): Observation | null {
    switch (obs.kind) {
      case 'source-health':
      case 'sidecar-load':
      case 'sidecar-stats':
        return obs;
      case 'router-config':
        return obs.servers === null || obs.servers.every((s) => this.#admit(s))
          ? obs
          : { ...obs, servers: obs.servers.filter((s) => this.#admitted.has(s)) };
      case 'router-score':
        return this.#admit(obs.chosen) && obs.candidates.every((c) => this.#admit(c.server)) ? obs : null;
      case 'decision':
        if (!this.#admit(obs.server)) return null;
        if (obs.inflight === null || Object.keys(obs.inflight).every((s) => this.#admit(s))) return obs;
        return {
          ...obs,
          inflight: Object.fromEntries(Object.entries(obs.inflight).filter(([s]) => this.#admitted.has(s))),
        };
      case 'worker-events':
      case 'stream-sequence':
      case 'router-poll':
      case 'outcome':
      case 'render-check':
      case 'server-info':
      case 'router-state':
      case 'poll-failure':
      case 'router-server-fact':
        return this.#admit(obs.server) ? obs : null;
    }
  }
}
