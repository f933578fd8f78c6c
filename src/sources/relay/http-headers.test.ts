import { describe, expect, it } from 'vitest';
import { downstreamResponseHeaders, upstreamRequestHeaders } from './http-headers.js';

describe('reverse-proxy header hygiene', () => {
  it('drops host and the hop-by-hop request headers, and the ones Connection names, keeping the rest as they are', () => {
    const out = upstreamRequestHeaders({
      host: 'relay:9401',
      connection: 'keep-alive, X-Hop-One,  x-hop-two ',
      'keep-alive': 'timeout=5',
      'transfer-encoding': 'chunked',
      te: 'trailers',
      'x-hop-one': 'a',
      'x-hop-two': 'b',
      'content-type': 'application/json',
      'x-correlation-id': 'conv-1',
      'set-cookie': ['a=1', 'b=2'],
    });
    expect(out).toEqual({
      'content-type': 'application/json',
      'x-correlation-id': 'conv-1',
      'set-cookie': ['a=1', 'b=2'],
    });
  });

  it('reads a Connection header sent several times', () => {
    const out = upstreamRequestHeaders({
      connection: ['x-a', 'close, X-B'] as unknown as string,
      'x-a': '1',
      'x-b': '2',
      'x-c': '3',
    });
    expect(out).toEqual({ 'x-c': '3' });
  });

  it('passes every header when there is no Connection header, host excepted', () => {
    expect(upstreamRequestHeaders({ host: 'h', accept: '*/*', 'content-length': '12' })).toEqual({
      accept: '*/*',
      'content-length': '12',
    });
  });

  it('drops the hop-by-hop response headers and the ones Connection names; keeps host on a response', () => {
    const out = downstreamResponseHeaders({
      connection: 'keep-alive, x-private',
      'keep-alive': 'timeout=5',
      'transfer-encoding': 'chunked',
      'x-private': 'p',
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      host: 'kept',
      missing: undefined,
    });
    expect(out).toEqual({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', host: 'kept' });
  });
});
