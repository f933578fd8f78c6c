import type { WireIssue } from './wire-issue.js';
export type TokenListResult = {
    readonly ok: true;
    readonly tokens: Uint32Array;
} | {
    readonly ok: false;
    readonly issue: WireIssue;
};
export declare function parseTokenList(text: string): TokenListResult;
