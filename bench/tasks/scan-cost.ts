// Child task: the relay's analysis of a CTX request alone, on one thread with no I/O — the bench's prompts read as the
// scan thread reads them (from a shared ring the id kernel is bound to) plus the digest's prefix fingerprints. Its
// CPU per request is what any relay that reads the prompt pays on top of forwarding (§4's floor rows).
import { bindIdRunKernel, ID_RUN_KERNEL_BYTES } from '../../src/core/relay/id-run-kernel.js';
import { createCtxBodyReader } from '../../src/core/relay/ctx-body-reader.js';
import { CtxScanScratch } from '../../src/core/relay/ctx-request-scanner.js';
import { promptFingerprints } from '../../src/core/state/incremental-keys.js';
import { sharedWasmMemory, WASM_PAGE_BYTES } from '../../src/core/wasm/wasm-binary.js';
import { promptBody } from './load.js';

export interface ScanCostParams {
  readonly promptBytes: number;
  /** distinct prompts (the load's clients) */
  readonly prompts: number;
  readonly reps: number;
}

export interface ScanCostResult {
  /** CPU ms of the process per request read */
  readonly cpuMsPerRequest: number;
  readonly ids: number;
}

export function runScanCost(params: ScanCostParams): ScanCostResult {
  const bodies = Array.from({ length: params.prompts }, (_, c) =>
    new TextEncoder().encode(promptBody(params.promptBytes, c)),
  );
  const ringBytes = Math.ceil(bodies.reduce((n, b) => n + b.length, 0) / WASM_PAGE_BYTES) * WASM_PAGE_BYTES;
  const memory = sharedWasmMemory(ringBytes + ID_RUN_KERNEL_BYTES);
  let views: Uint8Array[] = bodies;
  const bound = memory === null ? null : bindIdRunKernel(memory, ringBytes);
  const scratch = bound === null ? new CtxScanScratch() : new CtxScanScratch(bound);
  if (memory !== null && bound !== null) {
    const ring = new Uint8Array(memory.buffer, 0, ringBytes);
    let at = 0;
    views = bodies.map((b) => {
      ring.set(b, at);
      at += b.length;
      return ring.subarray(at - b.length, at);
    });
  }
  const read = (body: Uint8Array): number => {
    const reader = createCtxBodyReader('json', scratch);
    // as the body arrives: 64 KB socket reads
    for (let off = 0; off < body.length; off += 65_536) reader.feed(body.subarray(off, off + 65_536));
    const tokens = reader.finish({ 'x-correlation-id': 'c' })?.promptTokens ?? null;
    if (tokens === null) throw new Error('scan-cost: the bench prompt did not scan');
    return tokens.length + promptFingerprints(tokens).length;
  };
  let ids = 0;
  for (let i = 0; i < Math.min(200, params.reps); i++) ids += read(views[i % views.length]!); // warm-up
  const before = process.cpuUsage();
  ids = 0;
  for (let i = 0; i < params.reps; i++) ids += read(views[i % views.length]!);
  const used = process.cpuUsage(before);
  return { cpuMsPerRequest: (used.user + used.system) / 1000 / params.reps, ids };
}
