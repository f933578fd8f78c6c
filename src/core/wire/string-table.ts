// Known strings (object keys, enum values) as bytes, so the parsers match them without decoding the input.

/** The bytes of an ASCII constant (keys, literals, templates of the fast paths). */
export function asciiBytes(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let k = 0; k < text.length; k++) out[k] = text.charCodeAt(k);
  return out;
}

/** Known strings (object keys, enum values) looked up from their bytes without decoding them. */
export class StringTable {
  readonly names: readonly string[];
  /** by byte length: [bytes, id] pairs */
  readonly #byLength: (readonly [Uint8Array, number])[][] = [];

  constructor(names: readonly string[]) {
    this.names = names;
    names.forEach((name, id) => {
      const bucket = (this.#byLength[name.length] ??= []);
      bucket.push([asciiBytes(name), id]);
    });
  }

  /** id of the escape-free string bytes[start, end), or -1 */
  find(bytes: Uint8Array, start: number, end: number): number {
    const bucket = this.#byLength[end - start];
    if (bucket === undefined) return -1;
    for (const [name, id] of bucket) {
      let k = 0;
      while (k < name.length && bytes[start + k] === name[k]) k++;
      if (k === name.length) return id;
    }
    return -1;
  }
}
