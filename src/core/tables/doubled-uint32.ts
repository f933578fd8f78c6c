// The growth step of the append-only id arrays (token lists, request ids): a copy twice as long, contents kept.
// Called only when an array is full, so the per-id loops that fill them pay nothing for it.
export function doubledUint32(full: Uint32Array): Uint32Array<ArrayBuffer> {
  const grown = new Uint32Array(full.length * 2);
  grown.set(full);
  return grown;
}
