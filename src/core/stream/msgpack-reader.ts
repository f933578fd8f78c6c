// A msgpack reader over one payload's bytes for the stream's fast path (batch-reader.ts): lengths, integers, hashes
// as u64, token ids into a Uint32Array, and a walk over values nothing reads. It accepts only what @msgpack/msgpack
// decodes without an error and as plain values (no ext types, string map keys only): anything else throws OTHER
// and the caller decodes the batch the reference way.
import { KvsentinelError } from '../errors.js';
import { decode } from '@msgpack/msgpack';

/** thrown by the reader: not a shape it takes (the reference decoder decides) */
export const OTHER = new KvsentinelError('fast-path-declined', 'not a fast-path batch');
const MAX_DEPTH = 32;
/** the key @msgpack/msgpack refuses */
export const PROTO = new TextEncoder().encode('__proto__');

export class MsgpackReader {
  readonly bytes: Uint8Array;
  readonly view: DataView;
  pos = 0;

  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  need(n: number): void {
    if (this.pos + n > this.bytes.length) throw OTHER;
  }

  head(): number {
    if (this.pos >= this.bytes.length) throw OTHER;
    return this.bytes[this.pos++]!;
  }

  /** Array length, or -1 when the next value is not an array (nothing consumed then). */
  arrayLength(): number {
    return this.#containerSize(0x90, 0xdc);
  }

  /** Map size, or -1 when the next value is not a map (nothing consumed then). */
  mapSize(): number {
    return this.#containerSize(0x80, 0xde);
  }

  /**
   * Size of an array or a map: msgpack heads them alike, a fix form (`fix` + 0..15), then a 16-bit (`wide`) and a
   * 32-bit (`wide + 1`) size. -1 when the next value is not of that kind (nothing consumed then).
   */
  #containerSize(fix: number, wide: number): number {
    const h = this.bytes[this.pos];
    if (h === undefined) throw OTHER;
    if (h >= fix && h <= fix + 0x0f) return (this.pos++, h - fix);
    if (h === wide) return (this.pos++, this.u16());
    if (h === wide + 1) return (this.pos++, this.u32());
    return -1;
  }

  u16(): number {
    this.need(2);
    const v = this.view.getUint16(this.pos);
    this.pos += 2;
    return v;
  }

  u32(): number {
    this.need(4);
    const v = this.view.getUint32(this.pos);
    this.pos += 4;
    return v;
  }

  /** A str's byte length after its head, or -1 when the value is not a str (nothing consumed). */
  strLength(): number {
    const h = this.bytes[this.pos];
    if (h === undefined) throw OTHER;
    if (h >= 0xa0 && h <= 0xbf) return (this.pos++, h - 0xa0);
    if (h === 0xd9) {
      this.pos++;
      return this.head();
    }
    if (h === 0xda) return (this.pos++, this.u16());
    if (h === 0xdb) return (this.pos++, this.u32());
    return -1;
  }

  /** A map key matched against `key` (consumed either way); non-string keys are not the fast path's. */
  keyIs(start: number, length: number, key: Uint8Array): boolean {
    if (length !== key.length) return false;
    for (let i = 0; i < length; i++) if (this.bytes[start + i] !== key[i]) return false;
    return true;
  }

  /** An ASCII string (other text is decoded the reference way), or null for nil. */
  optString(): string | null {
    if (this.bytes[this.pos] === 0xc0) return (this.pos++, null);
    const n = this.strLength();
    if (n < 0) throw OTHER;
    this.need(n);
    let out = '';
    for (let i = 0; i < n; i++) {
      const c = this.bytes[this.pos + i]!;
      if (c >= 0x80) throw OTHER;
      out += String.fromCharCode(c);
    }
    this.pos += n;
    return out;
  }

  /** A non-negative integer in a format msgpack decodes as a number (not the 64-bit ones), or null for nil. */
  optCount(): number | null {
    const h = this.head();
    if (h < 0x80) return h;
    if (h === 0xc0) return null;
    if (h === 0xcc) return this.head();
    if (h === 0xcd) return this.u16();
    if (h === 0xce) return this.u32();
    if (h === 0xd0) return this.nonNegative(this.view.getInt8((this.need(1), this.pos++)));
    if (h === 0xd1) return this.nonNegative(this.view.getInt16((this.need(2), (this.pos += 2) - 2)));
    if (h === 0xd2) return this.nonNegative(this.view.getInt32((this.need(4), (this.pos += 4) - 4)));
    throw OTHER;
  }

  nonNegative(n: number): number {
    if (n < 0) throw OTHER;
    return n;
  }

  /** A hash: any integer modulo 2^64, or bytes (their low 8, big-endian); null for nil. */
  hash(): { hash: bigint | null; bytes: Uint8Array | null } {
    const h = this.head();
    if (h === 0xc0) return { hash: null, bytes: null };
    if (h === 0xc4 || h === 0xc5 || h === 0xc6) {
      const n = h === 0xc4 ? this.head() : h === 0xc5 ? this.u16() : this.u32();
      if (n === 0) throw OTHER;
      this.need(n);
      const bytes = this.bytes.subarray(this.pos, this.pos + n);
      this.pos += n;
      let out = 0n;
      for (let i = Math.max(0, n - 8); i < n; i++) out = (out << 8n) | BigInt(bytes[i]!);
      return { hash: out, bytes };
    }
    return { hash: this.intHash(h), bytes: null };
  }

  /** An integer hash after its head byte, modulo 2^64. */
  intHash(h: number): bigint {
    if (h < 0x80) return BigInt(h);
    if (h >= 0xe0) return BigInt.asUintN(64, BigInt(h - 0x100));
    switch (h) {
      case 0xcf:
      case 0xd3: {
        // an int64's two's-complement bytes are its value modulo 2^64
        this.need(8);
        const v = this.view.getBigUint64(this.pos);
        this.pos += 8;
        return v;
      }
      case 0xcc:
        return BigInt(this.head());
      case 0xcd:
        return BigInt(this.u16());
      case 0xce:
        return BigInt(this.u32());
      case 0xd0:
      case 0xd1:
      case 0xd2: {
        const n = h === 0xd0 ? 1 : h === 0xd1 ? 2 : 4;
        this.need(n);
        const v =
          n === 1 ? this.view.getInt8(this.pos) : n === 2 ? this.view.getInt16(this.pos) : this.view.getInt32(this.pos);
        this.pos += n;
        return BigInt.asUintN(64, BigInt(v));
      }
      default:
        throw OTHER;
    }
  }

  hashes(): { readonly values: bigint[]; readonly bytes: (Uint8Array | null)[] | null } {
    const n = this.arrayLength();
    if (n < 0) throw OTHER;
    const values: bigint[] = new Array<bigint>(n);
    let bytes: (Uint8Array | null)[] | null = null;
    for (let i = 0; i < n; i++) {
      const h = this.hash();
      if (h.hash === null) throw OTHER;
      values[i] = h.hash;
      if (h.bytes !== null) {
        bytes ??= new Array<Uint8Array | null>(n).fill(null);
        bytes[i] = h.bytes;
      }
    }
    return { values, bytes };
  }

  /** Token ids, 0..2^32-1 each, in the formats msgpack decodes as numbers; nil is none. */
  tokens(): Uint32Array {
    if (this.bytes[this.pos] === 0xc0) return (this.pos++, new Uint32Array(0));
    const n = this.arrayLength();
    if (n < 0) throw OTHER;
    const out = new Uint32Array(n);
    const b = this.bytes;
    for (let i = 0; i < n; i++) {
      const h = b[this.pos];
      if (h === undefined) throw OTHER;
      if (h < 0x80) {
        out[i] = h;
        this.pos++;
      } else if (h === 0xce) {
        this.pos++;
        out[i] = this.u32();
      } else if (h === 0xcd) {
        this.pos++;
        out[i] = this.u16();
      } else out[i] = this.optCountNotNil();
    }
    return out;
  }

  optCountNotNil(): number {
    const v = this.optCount();
    if (v === null) throw OTHER;
    return v;
  }

  /** ts: a finite number, an integer, or anything else as null (walked over). */
  ts(): number | null {
    const h = this.bytes[this.pos];
    if (h === 0xcb || h === 0xca) {
      // float 64 or float 32
      const size = h === 0xcb ? 8 : 4;
      this.pos++;
      this.need(size);
      const v = size === 8 ? this.view.getFloat64(this.pos) : this.view.getFloat32(this.pos);
      this.pos += size;
      return Number.isFinite(v) ? v : null;
    }
    if (h !== undefined && (h < 0x80 || h >= 0xe0 || (h >= 0xcc && h <= 0xd3))) {
      this.pos++;
      if (h < 0x80) return h;
      if (h >= 0xe0) return h - 0x100;
      // an integer ts: its value (as an unsigned 64-bit one when encoded so)
      const u = this.intHash(h);
      return h === 0xcf || h <= 0xce ? Number(u) : Number(BigInt.asIntN(64, u));
    }
    this.skip(0);
    return null;
  }

  /** The next value decoded by the reference decoder (values only read as a whole: extra_keys, mm_keys). */
  generic(): unknown {
    const start = this.pos;
    this.skip(0);
    return decode(this.bytes.subarray(start, this.pos), { useBigInt64: true });
  }

  /** Walks over one value, accepting only what the reference decoder decodes without an error or an ext type. */
  skip(depth: number): void {
    if (depth > MAX_DEPTH) throw OTHER;
    const h = this.head();
    if (h < 0x80 || h >= 0xe0 || h === 0xc0 || h === 0xc2 || h === 0xc3) return;
    if (h >= 0xa0 && h <= 0xbf) return this.over(h - 0xa0);
    if (h >= 0x90 && h <= 0x9f) return this.items(h - 0x90, depth);
    if (h >= 0x80 && h <= 0x8f) return this.entries(h - 0x80, depth);
    switch (h) {
      case 0xcc:
      case 0xd0:
        return this.over(1);
      case 0xcd:
      case 0xd1:
        return this.over(2);
      case 0xce:
      case 0xd2:
      case 0xca:
        return this.over(4);
      case 0xcf:
      case 0xd3:
      case 0xcb:
        return this.over(8);
      case 0xd9:
      case 0xc4:
        return this.over(this.head());
      case 0xda:
      case 0xc5:
        return this.over(this.u16());
      case 0xdb:
      case 0xc6:
        return this.over(this.u32());
      case 0xdc:
        return this.items(this.u16(), depth);
      case 0xdd:
        return this.items(this.u32(), depth);
      case 0xde:
        return this.entries(this.u16(), depth);
      case 0xdf:
        return this.entries(this.u32(), depth);
      default:
        throw OTHER; // ext types, 0xc1
    }
  }

  over(n: number): void {
    this.need(n);
    this.pos += n;
  }

  items(n: number, depth: number): void {
    for (let i = 0; i < n; i++) this.skip(depth + 1);
  }

  entries(n: number, depth: number): void {
    for (let i = 0; i < n; i++) {
      const len = this.strLength();
      if (len < 0) throw OTHER;
      this.need(len);
      if (this.keyIs(this.pos, len, PROTO)) throw OTHER;
      this.pos += len;
      this.skip(depth + 1);
    }
  }
}
