import type { ServerInfo } from './ctx-worker.js';
import type { RouterSettings } from './routers/router.js';
/** virtual time 0 of a run, as wall-clock time in the logs */
export declare const VIRTUAL_EPOCH_MS: number;
export declare function isoAt(virtualMs: number): string;
export interface RequestLogEntry {
    readonly ts: number;
    readonly requestId: string;
    readonly correlationId: string | null;
    readonly ctxServer: string;
    readonly promptTokens: number;
    readonly cachedTokens: number;
    readonly promptTokenIds?: Uint32Array;
}
export declare function requestLogLine(entry: RequestLogEntry): string;
export type LogLevel = 'I' | 'W' | 'E' | 'D';
export declare function orchestratorLine(virtualMs: number, level: LogLevel, message: string): string;
/** Python repr of a small JSON-like value (what f"{dict}" prints) */
export declare function pyRepr(value: unknown): string;
/** the router's configuration lines, logged once at start */
export declare function routerConfigLines(settings: RouterSettings, servers: readonly string[]): string[];
export declare function serverReadyLine(server: string, info: ServerInfo): string;
export declare function pollFailureLine(server: string, message: string): string;
