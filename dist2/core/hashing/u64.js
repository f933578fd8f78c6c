// Unsigned 64-bit arithmetic on (hi, lo) uint32 halves, so hot loops never allocate a BigInt.
// Results land in a caller-owned two-slot scratch to avoid returning objects.
const TWO_32 = 0x1_0000_0000;
export function u64ToBigInt(hi, lo) {
    return (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);
}
export function bigIntHi(value) {
    return Number((value >> 32n) & 0xffffffffn);
}
export function bigIntLo(value) {
    return Number(value & 0xffffffffn);
}
/** (aHi:aLo) * (bHi:bLo) mod 2^64 → out */
export function mul64(aHi, aLo, bHi, bLo, out) {
    // full 64-bit product of the low halves from 16-bit limbs
    const a0 = aLo & 0xffff;
    const a1 = aLo >>> 16;
    const b0 = bLo & 0xffff;
    const b1 = bLo >>> 16;
    const p00 = a0 * b0;
    const p01 = a0 * b1;
    const p10 = a1 * b0;
    const p11 = a1 * b1;
    const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
    const lo = ((mid & 0xffff) << 16) | (p00 & 0xffff);
    const carry = Math.floor(mid / 0x10000) + Math.floor(p01 / 0x10000) + Math.floor(p10 / 0x10000) + p11;
    const hi = (carry + Math.imul(aHi, bLo) + Math.imul(aLo, bHi)) >>> 0;
    out[0] = hi;
    out[1] = lo >>> 0;
}
/** seed ^ ((add + (seed << 6) + (seed >> 2)) mod 2^64), with add given as halves → out */
export function hashCombine(seedHi, seedLo, addHi, addLo, out) {
    const shlHi = ((seedHi << 6) | (seedLo >>> 26)) >>> 0;
    const shlLo = (seedLo << 6) >>> 0;
    const shrHi = seedHi >>> 2;
    const shrLo = ((seedLo >>> 2) | (seedHi << 30)) >>> 0;
    const loSum = addLo + shlLo + shrLo; // < 3 * 2^32, exact in a double
    const carry = Math.floor(loSum / TWO_32);
    const hiSum = (addHi + shlHi + shrHi + carry) >>> 0;
    out[0] = (seedHi ^ hiSum) >>> 0;
    out[1] = (seedLo ^ (loSum >>> 0)) >>> 0;
}
//# sourceMappingURL=u64.js.map