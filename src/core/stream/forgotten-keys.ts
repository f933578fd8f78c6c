// The keys of one rank's forgotten engine hashes (their last copy went), kept only so a later store of the same
// hash gets its old key back (the re-keyer's use: vLLM publishes an offloaded CPU copy after the GPU copy may have
// gone). Flat, in a ring of typed arrays: the oldest forgotten hash is overwritten once `cap` are held. A stream
// forgets a hash per removed block, so an object per entry (the key, its 32-byte chain, a BigInt) would churn
// through the old generation at the stream's rate and hold ~300 bytes per entry; a slot here holds 49.
// A hash taken back leaves its slot empty until the ring comes round to it: the ring then holds fewer than `cap`.
import { KvsentinelError } from '../errors.js';
import { U64Halves } from '../tables/u64-hash-set.js';
import { U64SlotMap } from '../tables/u64-slot-map.js';

const CHAIN_BYTES = 32;
const MIN_SLOTS = 64;
/** a slot's state: its key has a chain, has none, or the slot is empty (taken back, or overwritten) */
const HAS_CHAIN = 1;
const NO_CHAIN = 2;
const EMPTY = 0;

export interface ForgottenKey {
  readonly chain: Uint8Array | null;
  readonly tableKey: bigint;
}

export class ForgottenKeys {
  readonly #cap: number;
  readonly #index = new U64SlotMap();
  #hi: Uint32Array = new Uint32Array(MIN_SLOTS);
  #lo: Uint32Array = new Uint32Array(MIN_SLOTS);
  #state: Uint8Array = new Uint8Array(MIN_SLOTS);
  #chains: Uint8Array = new Uint8Array(MIN_SLOTS * CHAIN_BYTES);
  #tableKeys: BigUint64Array = new BigUint64Array(MIN_SLOTS);
  /** the next slot written; the ring wraps once every slot up to cap was written */
  #next = 0;
  #wrapped = false;
  readonly #key = new U64Halves();

  constructor(cap: number) {
    if (!Number.isInteger(cap) || cap < 1 || cap > 0x7fff_ffff)
      throw new KvsentinelError('internal', `ForgottenKeys cap must be a positive int32, got ${cap}`);
    this.#cap = cap;
  }

  /** hashes held */
  get size(): number {
    return this.#index.size;
  }

  /** Remembers a forgotten hash's key (as the newest; a hash held already moves there). */
  remember(hash: bigint, chain: Uint8Array | null, tableKey: bigint): void {
    this.#key.split(hash);
    const { hi, lo } = this.#key;
    const slot = this.#next;
    if (this.#wrapped) {
      // the oldest goes, unless its hash was taken back (or remembered again: its old slot was emptied) since
      if (this.#state[slot] !== EMPTY) this.#index.delete(this.#hi[slot]!, this.#lo[slot]!);
    } else if (slot === this.#hi.length) this.#grow();
    this.#hi[slot] = hi;
    this.#lo[slot] = lo;
    this.#tableKeys[slot] = tableKey;
    if (chain === null) this.#state[slot] = NO_CHAIN;
    else {
      if (chain.length !== CHAIN_BYTES)
        throw new KvsentinelError('internal', `a chained key is ${CHAIN_BYTES} bytes, got ${chain.length}`);
      // byte by byte: for 32 bytes, a loop the JIT compiles costs less than a call into TypedArray.prototype.set
      const chains = this.#chains;
      const at = slot * CHAIN_BYTES;
      for (let i = 0; i < CHAIN_BYTES; i++) chains[at + i] = chain[i]!;
      this.#state[slot] = HAS_CHAIN;
    }
    // a hash held already (in another slot) moves here: its old slot is emptied
    const held = this.#index.put(hi, lo, slot);
    if (held >= 0 && held !== slot) this.#state[held] = EMPTY;
    this.#next = slot + 1;
    if (this.#next === this.#cap) {
      this.#next = 0;
      this.#wrapped = true;
    }
  }

  /** The hash's key, forgotten no more; undefined when it is not held. */
  take(hash: bigint): ForgottenKey | undefined {
    this.#key.split(hash);
    const slot = this.#index.delete(this.#key.hi, this.#key.lo);
    if (slot < 0) return undefined;
    const state = this.#state[slot];
    this.#state[slot] = EMPTY;
    return {
      chain: state === HAS_CHAIN ? this.#chains.slice(slot * CHAIN_BYTES, (slot + 1) * CHAIN_BYTES) : null,
      tableKey: this.#tableKeys[slot]!,
    };
  }

  #grow(): void {
    const size = Math.min(this.#hi.length * 2, this.#cap);
    const hi = new Uint32Array(size);
    hi.set(this.#hi);
    const lo = new Uint32Array(size);
    lo.set(this.#lo);
    const state = new Uint8Array(size);
    state.set(this.#state);
    const chains = new Uint8Array(size * CHAIN_BYTES);
    chains.set(this.#chains);
    const tableKeys = new BigUint64Array(size);
    tableKeys.set(this.#tableKeys);
    this.#hi = hi;
    this.#lo = lo;
    this.#state = state;
    this.#chains = chains;
    this.#tableKeys = tableKeys;
  }
}
