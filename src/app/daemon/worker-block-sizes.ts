// The workers' tokens_per_block as the observation stream states it (`server-info`, from /server_info or the
// orchestrator log's "adopting worker's tokens_per_block"): request logs count cached blocks, and need the size to
// turn them into tokens. Read from the same stream the state reads, not handed from one source to another.
import type { Observation } from '../../core/observe/observation.js';

export class WorkerBlockSizes {
  readonly #sizes = new Map<string, number>();

  /** an observation on its way to the state; a server-info that does not state the size changes nothing */
  observe(o: Observation): void {
    if (o.kind === 'server-info' && o.tokensPerBlock !== null && o.tokensPerBlock > 0)
      this.#sizes.set(o.server, o.tokensPerBlock);
  }

  tokensPerBlock(server: string): number | null {
    return this.#sizes.get(server) ?? null;
  }
}
