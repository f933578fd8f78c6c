// The newest KvCacheAwareRouter's content-affinity pin (router.py `_content_affinity_key`, `_route`): a chat
// request is keyed on its first two message contents plus, when the request carries `prompt_token_ids`, its first
// 256 ids; every decision pins its key to the chosen server (LRU, 50 000 keys), and a later request with the same key
// goes to that server whatever the scores, as long as the server is routable and under load_cap. Completions requests
// have no messages, so they never pin. The real key is a keyed blake3 digest of the joined text; a SHA-256 digest of
// the same text groups requests identically (and bounds what the simulator keeps per key).
import { createHash } from 'node:crypto';

export const ROUTE_AFFINITY_CACHE_SIZE = 50_000;
export const ROUTE_AFFINITY_TOKEN_PREFIX = 256;

/** the pin key of a request body, or null when it has no messages (a completions request) */
export function contentAffinityKey(messages: unknown, promptTokenIds: unknown): string | null {
  if (!Array.isArray(messages) || messages.length === 0) return null;
  let text = '';
  for (const message of messages.slice(0, 2)) {
    const content: unknown =
      typeof message === 'object' && message !== null ? (message as Record<string, unknown>)['content'] : '';
    text += contentText(content);
  }
  // Python truthiness: an absent, null or empty list adds nothing; str(list(ids)) is "[1, 2, 3]"
  if (Array.isArray(promptTokenIds) && promptTokenIds.length > 0) {
    text += `[${promptTokenIds.slice(0, ROUTE_AFFINITY_TOKEN_PREFIX).map(String).join(', ')}]`;
  }
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** str(content) in Python: strings as they are; other values in a stable rendering of their own */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (content === undefined || content === null) return 'None';
  return JSON.stringify(content);
}

/** conversation key → home server, least recently routed evicted first */
export class RouteAffinity {
  readonly #capacity: number;
  readonly #pins = new Map<string, string>();

  constructor(capacity: number = ROUTE_AFFINITY_CACHE_SIZE) {
    this.#capacity = capacity;
  }

  get size(): number {
    return this.#pins.size;
  }

  pinned(key: string): string | undefined {
    return this.#pins.get(key);
  }

  /** after every decision with a key: the chosen server becomes (or stays) the key's home, most recent */
  pin(key: string, server: string): void {
    this.#pins.delete(key);
    this.#pins.set(key, server);
    while (this.#pins.size > this.#capacity) {
      const oldest = this.#pins.keys().next().value as string;
      this.#pins.delete(oldest);
    }
  }
}
