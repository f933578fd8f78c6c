;; The per-token loop of v1_block_key (docs/trtllm-wire.md §1.2) in WebAssembly text: the readable source of the
;; module that v1-token-mix.ts encodes instruction by instruction (mixModuleBytes). Nothing builds from this file:
;; test/core/wasm-kernel-sources.test.ts assembles it with wabt and checks the result is the encoder's bytes, so a
;; change to either that the other does not make fails there.
;;
;; What it computes, for every token v of the block (u32, wrapping arithmetic):
;;   v = ((v >> 16) ^ v) * 0x045d9f3b
;;   v = ((v >> 16) ^ v) * 0x045d9f3b
;;   v = ((v >> 16) ^ v) + 0x9e3779b9
;;   seed ^= u64(v) + (seed << 6) + (seed >> 2)          (u64, mod 2^64)
;; Why WebAssembly: the seed update is serial and 64-bit; JavaScript has to split it into two int32 halves and a
;; carry, here it is one i64 add chain (~2x the JavaScript loop, mixTokensJs, which is the fallback and the reference).
;;
;; Memory layout: the caller copies the block's tokens as u32 to byte TOKENS_AT = 16 and reads the seed back as an
;; u64 at byte 0 (little-endian: [lo, hi] as u32 words). The memory grows from the caller when a block needs more.
(module
  ;; mix(len, seedHi, seedLo): no result, the seed goes to memory
  (type $mix_t (func (param i32 i32 i32)))

  (func $mix (type $mix_t) (param $len i32) (param $hi i32) (param $lo i32)
    (local $seed i64)
    (local $p i32)    ;; byte address of the next token
    (local $end i32)  ;; byte address past the last token
    (local $v i32)    ;; the token being mixed

    ;; seed = (u64(hi) << 32) | u64(lo)
    local.get $hi
    i64.extend_i32_u
    i64.const 32
    i64.shl
    local.get $lo
    i64.extend_i32_u
    i64.or
    local.set $seed

    ;; p = TOKENS_AT; end = TOKENS_AT + len * 4
    i32.const 16
    local.set $p
    local.get $len
    i32.const 2
    i32.shl
    i32.const 16
    i32.add
    local.set $end

    block $done
      loop $next
        ;; if p >= end: done
        local.get $p
        local.get $end
        i32.ge_u
        br_if $done

        ;; v = the u32 at p (tokens are 4-aligned: natural alignment)
        local.get $p
        i32.load
        local.set $v

        ;; v = ((v >> 16) ^ v) * 0x045d9f3b, twice
        local.get $v
        i32.const 16
        i32.shr_u
        local.get $v
        i32.xor
        i32.const 0x045d9f3b
        i32.mul
        local.set $v
        local.get $v
        i32.const 16
        i32.shr_u
        local.get $v
        i32.xor
        i32.const 0x045d9f3b
        i32.mul
        local.set $v

        ;; v = ((v >> 16) ^ v) + 0x9e3779b9 (an i32 constant is signed: this is -1640531527)
        local.get $v
        i32.const 16
        i32.shr_u
        local.get $v
        i32.xor
        i32.const 0x9e3779b9
        i32.add
        local.set $v

        ;; seed ^= u64(v) + (seed << 6) + (seed >> 2)
        local.get $seed
        local.get $v
        i64.extend_i32_u
        local.get $seed
        i64.const 6
        i64.shl
        i64.add
        local.get $seed
        i64.const 2
        i64.shr_u
        i64.add
        i64.xor
        local.set $seed

        ;; p += 4; next token
        local.get $p
        i32.const 4
        i32.add
        local.set $p
        br $next
      end
    end

    ;; the seed at byte 0 (8-aligned)
    i32.const 0
    local.get $seed
    i64.store)

  ;; one page to start with; no maximum, so the caller can grow it for a large block
  (memory $memory 1)

  (export "mix" (func $mix))
  (export "memory" (memory $memory)))
