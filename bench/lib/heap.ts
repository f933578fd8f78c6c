// What a memory measurement reads in a bench child (node --expose-gc): a full collection, and the bytes the heap and
// array buffers still hold after it.

/** Two full collections (the second frees what the first's finalizers let go). */
export function gc(): void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g === undefined) throw new Error('run node with --expose-gc');
  g();
  g();
}

/** Bytes retained by the JS heap and by ArrayBuffers (typed-array tables live outside the heap). */
export function retained(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}
