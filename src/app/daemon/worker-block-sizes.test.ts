import { describe, expect, it } from 'vitest';
import { WorkerBlockSizes } from './worker-block-sizes.js';

describe('worker block sizes from the observation stream', () => {
  it('takes the size a server-info states, keeps it when a later one states none, and ignores other observations', () => {
    const sizes = new WorkerBlockSizes();
    expect(sizes.tokensPerBlock('ctx0')).toBeNull();
    sizes.observe({ kind: 'server-info', ts: 1, server: 'ctx0', hashAlgo: 'v2_sha256', tokensPerBlock: 128 });
    sizes.observe({ kind: 'server-info', ts: 2, server: 'ctx0', hashAlgo: 'v2_sha256', tokensPerBlock: null });
    sizes.observe({ kind: 'server-info', ts: 3, server: 'ctx1', hashAlgo: null, tokensPerBlock: 0 });
    expect(sizes.tokensPerBlock('ctx0')).toBe(128);
    expect(sizes.tokensPerBlock('ctx1')).toBeNull();
    sizes.observe({ kind: 'server-info', ts: 4, server: 'ctx0', hashAlgo: null, tokensPerBlock: 64 });
    expect(sizes.tokensPerBlock('ctx0')).toBe(64);
  });
});
