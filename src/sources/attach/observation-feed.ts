// The client end of a running sidecar's observation stream (/ws?view=observations, src/outputs/observation-stream.ts):
// connects, checks the hello, then hands each bundle line and each tick to its reader, in order. Reading it takes
// nothing from the sidecar's data path: closing it closes one WebSocket, never a relay port.
import { WebSocket } from 'ws';
import { BUNDLE_FORMAT, BUNDLE_VERSION } from '../../core/bundle/bundle-codec.js';
import { KvsentinelError } from '../../core/errors.js';
import type { SentinelMode } from '../../core/state/sentinel-state.js';

export interface ObservationFeedHello {
  readonly ts: number;
  readonly version: string;
  readonly keyHistory: number;
  readonly mode: SentinelMode;
  readonly recordingMode: SentinelMode;
  readonly tableBlocksPerServer: number | null;
  readonly sources: readonly string[];
  readonly malformed: number;
}

export interface ObservationFeedTick {
  readonly ts: number;
  readonly malformed: number;
  readonly notes: readonly string[];
}

export interface ObservationFeedReader {
  /** one bundle line (an observation and its digest), its text and the object parsed from it */
  line(text: string, parsed: Record<string, unknown>): void;
  tick(tick: ObservationFeedTick): void;
}

export interface ObservationFeedEnd {
  /** the sidecar (or the network) ended the stream, not the reader */
  readonly byPeer: boolean;
  readonly code: number;
  readonly reason: string;
}

const MODES: readonly SentinelMode[] = ['relay', 'watch', 'exclusive', 'auto'];

function modeOf(v: unknown, fallback: SentinelMode): SentinelMode {
  return MODES.includes(v as SentinelMode) ? (v as SentinelMode) : fallback;
}

/** http(s)://host:port[/…] or ws(s)://… → the sidecar's observation stream URL. */
export function observationFeedUrl(text: string): URL {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new KvsentinelError('usage', `--attach '${text}': not a URL (e.g. http://127.0.0.1:9464)`);
  }
  if (u.protocol === 'http:') u.protocol = 'ws:';
  else if (u.protocol === 'https:') u.protocol = 'wss:';
  else if (u.protocol !== 'ws:' && u.protocol !== 'wss:')
    throw new KvsentinelError(
      'usage',
      `--attach '${text}': expected http(s):// or ws(s):// (the sidecar's web address)`,
    );
  u.pathname = '/ws';
  u.search = '?view=observations';
  return u;
}

export class ObservationFeed {
  readonly hello: ObservationFeedHello;
  readonly url: string;
  /** resolves when the stream ends, by either side */
  readonly ended: Promise<ObservationFeedEnd>;
  readonly #ws: WebSocket;
  #closing = false;

  private constructor(
    url: string,
    ws: WebSocket,
    hello: ObservationFeedHello,
    ended: Promise<{ code: number; reason: string }>,
  ) {
    this.url = url;
    this.#ws = ws;
    this.hello = hello;
    this.ended = ended.then((e) => ({ ...e, byPeer: !this.#closing }));
  }

  /**
   * Connects and waits for the hello; lines that arrive before `read()` is called are held. Throws a
   * KvsentinelError (source-unreachable) when the sidecar cannot be reached or does not serve the stream.
   */
  static async connect(
    target: string,
    options: { readonly bearerToken?: string | null; readonly timeoutMs?: number } = {},
  ): Promise<ObservationFeed> {
    const url = observationFeedUrl(target);
    const shown = `${url.protocol === 'wss:' ? 'https' : 'http'}://${url.host}`;
    const ws = new WebSocket(url, {
      handshakeTimeout: options.timeoutMs ?? 10_000,
      maxPayload: 256 * 1024 * 1024,
      ...(options.bearerToken != null ? { headers: { authorization: `Bearer ${options.bearerToken}` } } : {}),
    });
    const held: string[] = [];
    const ended = new Promise<{ code: number; reason: string }>((resolve) =>
      ws.on('close', (code, reason) => resolve({ code, reason: reason.toString('utf8') })),
    );
    const hello = await new Promise<ObservationFeedHello>((resolve, reject) => {
      const fail = (why: string): void => {
        ws.terminate();
        reject(new KvsentinelError('source-unreachable', `cannot attach to ${shown}: ${why}`));
      };
      ws.on('unexpected-response', (_req, res) =>
        fail(
          res.statusCode === 401
            ? 'it needs a bearer token (--web.bearer-token-file)'
            : `HTTP ${res.statusCode ?? '?'} (is it a kvsentinel sidecar's web address?)`,
        ),
      );
      ws.on('error', (err) => fail(err.message));
      ws.once('message', (data: Buffer) => {
        const first = data.toString('utf8').split('\n', 1)[0] ?? '';
        let h: Record<string, unknown>;
        try {
          h = JSON.parse(first) as Record<string, unknown>;
        } catch {
          return fail('its first frame is not JSON');
        }
        if (h['type'] !== 'hello' || h['stream'] !== 'observations')
          return fail(
            `it does not serve the observation stream (a kvsentinel ${typeof h['version'] === 'string' ? h['version'] : ''} without /ws?view=observations)`.replace(
              '  ',
              ' ',
            ),
          );
        if (h['format'] !== BUNDLE_FORMAT || h['bundle_version'] !== BUNDLE_VERSION)
          return fail(`its stream is ${String(h['format'])} v${String(h['bundle_version'])}, this kvsentinel reads v1`);
        held.push(data.toString('utf8').slice(first.length + 1));
        resolve({
          ts: typeof h['ts'] === 'number' ? h['ts'] : Date.now(),
          version: typeof h['version'] === 'string' ? h['version'] : 'unknown',
          keyHistory: typeof h['key_history'] === 'number' ? h['key_history'] : 0,
          mode: modeOf(h['mode'], 'auto'),
          recordingMode: modeOf(h['recording_mode'], 'auto'),
          tableBlocksPerServer: typeof h['table_blocks_per_server'] === 'number' ? h['table_blocks_per_server'] : null,
          sources: Array.isArray(h['sources']) ? h['sources'].filter((s): s is string => typeof s === 'string') : [],
          malformed: typeof h['malformed'] === 'number' ? h['malformed'] : 0,
        });
        ws.on('message', (more: Buffer) => held.push(more.toString('utf8')));
      });
    });
    const feed = new ObservationFeed(shown, ws, hello, ended);
    feed.#held = held;
    return feed;
  }

  #held: string[] | null = null;

  /** Hands every line (held ones first) to the reader from now on. */
  read(reader: ObservationFeedReader): void {
    const take = (chunk: string): void => {
      for (const text of chunk.split('\n')) {
        if (text === '') continue;
        let parsed: Record<string, unknown>;
        try {
          parsed = JSON.parse(text) as Record<string, unknown>;
        } catch {
          continue; // the sidecar writes whole lines; a broken one is not an observation
        }
        if (parsed['type'] === 'tick') {
          reader.tick({
            ts: typeof parsed['ts'] === 'number' ? parsed['ts'] : Date.now(),
            malformed: typeof parsed['malformed'] === 'number' ? parsed['malformed'] : 0,
            notes: Array.isArray(parsed['notes'])
              ? parsed['notes'].filter((n): n is string => typeof n === 'string')
              : [],
          });
        } else if (typeof parsed['kind'] === 'string') reader.line(text, parsed);
      }
    };
    const held = this.#held ?? [];
    this.#held = null;
    this.#ws.removeAllListeners('message');
    for (const chunk of held) take(chunk);
    this.#ws.on('message', (data: Buffer) => take(data.toString('utf8')));
  }

  /** Ends the stream from this side (the sidecar goes on as before). */
  async close(): Promise<void> {
    this.#closing = true;
    if (this.#ws.readyState === WebSocket.OPEN || this.#ws.readyState === WebSocket.CONNECTING) this.#ws.close(1000);
    await this.ended;
  }
}
