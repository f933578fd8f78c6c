;; SHA-256's compression (FIPS 180-4 §6.2.2) over a padded message, in WebAssembly text: the readable source of the
;; module that block-sha256-kernel.ts encodes instruction by instruction (sha256ModuleBytes). Nothing builds from this
;; file: test/core/wasm-kernel-sources.test.ts assembles it with wabt and checks the result is the encoder's bytes.
;;
;; Why WebAssembly: a ZMQ stream re-keys every stored block with one V2 block key (two compressions of a 16-token
;; block), and this loop, with native rotations and its 8 working variables in locals, is 1.3x the JavaScript one
;; (block-sha256.ts, which stays the fallback and the reference).
;;
;; Memory layout (bytes; words are i32 values, as a little-endian Int32Array over the memory holds them):
;;   0    the digest: H0..H7 after the last block
;;   256  the 64 round constants K, written there by the caller once
;;   512  the message schedule W[0..64)
;;   1024 the message, already padded: `blocks` runs of 16 big-endian words (the caller lays them out)
(module
  ;; hash(blocks): no result, the digest goes to memory
  (type $hash_t (func (param i32)))

  (func $hash (type $hash_t) (param $blocks i32)
    (local $a i32) (local $b i32) (local $c i32) (local $d i32)
    (local $e i32) (local $f i32) (local $g i32) (local $h i32)
    (local $h0 i32) (local $h1 i32) (local $h2 i32) (local $h3 i32)
    (local $h4 i32) (local $h5 i32) (local $h6 i32) (local $h7 i32)
    (local $m i32)   ;; byte address of the block being compressed
    (local $i i32)   ;; byte offset into W (and K): 4 per word
    (local $x i32)   ;; a schedule word, read once for its three terms
    (local $t1 i32)  ;; the round's T1

    ;; the initial hash value H(0)
    i32.const 0x6a09e667
    local.set $h0
    i32.const 0xbb67ae85
    local.set $h1
    i32.const 0x3c6ef372
    local.set $h2
    i32.const 0xa54ff53a
    local.set $h3
    i32.const 0x510e527f
    local.set $h4
    i32.const 0x9b05688c
    local.set $h5
    i32.const 0x1f83d9ab
    local.set $h6
    i32.const 0x5be0cd19
    local.set $h7
    i32.const 1024
    local.set $m

    block $done
      loop $block
        ;; if blocks == 0: done
        local.get $blocks
        i32.eqz
        br_if $done

        ;; W[0..16) = the block's words
        i32.const 0
        local.set $i
        loop $copy
          local.get $i
          i32.const 512
          i32.add
          local.get $m
          local.get $i
          i32.add
          i32.load
          i32.store
          local.get $i
          i32.const 4
          i32.add
          local.tee $i
          i32.const 64
          i32.lt_u
          br_if $copy
        end

        ;; W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16], t = 16..63 (W[t-k] is at 512 + i - 4k)
        loop $schedule
          local.get $i
          i32.const 512
          i32.add
          ;; W[t-16]
          local.get $i
          i32.const 448
          i32.add
          i32.load
          ;; σ0(x) = (x >>> 7) ^ (x >>> 18) ^ (x >> 3), x = W[t-15]
          local.get $i
          i32.const 452
          i32.add
          i32.load
          local.tee $x
          i32.const 7
          i32.rotr
          local.get $x
          i32.const 18
          i32.rotr
          i32.xor
          local.get $x
          i32.const 3
          i32.shr_u
          i32.xor
          i32.add
          ;; W[t-7]
          local.get $i
          i32.const 484
          i32.add
          i32.load
          i32.add
          ;; σ1(x) = (x >>> 17) ^ (x >>> 19) ^ (x >> 10), x = W[t-2]
          local.get $i
          i32.const 504
          i32.add
          i32.load
          local.tee $x
          i32.const 17
          i32.rotr
          local.get $x
          i32.const 19
          i32.rotr
          i32.xor
          local.get $x
          i32.const 10
          i32.shr_u
          i32.xor
          i32.add
          i32.store
          local.get $i
          i32.const 4
          i32.add
          local.tee $i
          i32.const 256
          i32.lt_u
          br_if $schedule
        end

        ;; the working variables start from the hash so far
        local.get $h0
        local.set $a
        local.get $h1
        local.set $b
        local.get $h2
        local.set $c
        local.get $h3
        local.set $d
        local.get $h4
        local.set $e
        local.get $h5
        local.set $f
        local.get $h6
        local.set $g
        local.get $h7
        local.set $h

        i32.const 0
        local.set $i
        loop $round
          ;; T1 = h + Σ1(e) + Ch(e, f, g) + K[t] + W[t]
          local.get $h
          ;; Σ1(e) = (e >>> 6) ^ (e >>> 11) ^ (e >>> 25)
          local.get $e
          i32.const 6
          i32.rotr
          local.get $e
          i32.const 11
          i32.rotr
          i32.xor
          local.get $e
          i32.const 25
          i32.rotr
          i32.xor
          i32.add
          ;; Ch(e, f, g) = g ^ (e & (f ^ g))
          local.get $g
          local.get $e
          local.get $f
          local.get $g
          i32.xor
          i32.and
          i32.xor
          i32.add
          local.get $i
          i32.const 256
          i32.add
          i32.load
          i32.add
          local.get $i
          i32.const 512
          i32.add
          i32.load
          i32.add
          local.set $t1
          ;; h = g; g = f; f = e; e = d + T1; d = c; c = b; b = a
          local.get $g
          local.set $h
          local.get $f
          local.set $g
          local.get $e
          local.set $f
          local.get $d
          local.get $t1
          i32.add
          local.set $e
          local.get $c
          local.set $d
          local.get $b
          local.set $c
          local.get $a
          local.set $b
          ;; a = T1 + Σ0(a) + Maj(a, b, c), of the old a, b, c: now b, c, d
          local.get $t1
          ;; Σ0(a) = (a >>> 2) ^ (a >>> 13) ^ (a >>> 22)
          local.get $b
          i32.const 2
          i32.rotr
          local.get $b
          i32.const 13
          i32.rotr
          i32.xor
          local.get $b
          i32.const 22
          i32.rotr
          i32.xor
          i32.add
          ;; Maj(a, b, c) = (a & b) | (c & (a | b))
          local.get $b
          local.get $c
          i32.and
          local.get $d
          local.get $b
          local.get $c
          i32.or
          i32.and
          i32.or
          i32.add
          local.set $a
          local.get $i
          i32.const 4
          i32.add
          local.tee $i
          i32.const 256
          i32.lt_u
          br_if $round
        end

        ;; H(i) = H(i-1) + the working variables
        local.get $h0
        local.get $a
        i32.add
        local.set $h0
        local.get $h1
        local.get $b
        i32.add
        local.set $h1
        local.get $h2
        local.get $c
        i32.add
        local.set $h2
        local.get $h3
        local.get $d
        i32.add
        local.set $h3
        local.get $h4
        local.get $e
        i32.add
        local.set $h4
        local.get $h5
        local.get $f
        i32.add
        local.set $h5
        local.get $h6
        local.get $g
        i32.add
        local.set $h6
        local.get $h7
        local.get $h
        i32.add
        local.set $h7

        ;; the next block: m += 64; blocks -= 1
        local.get $m
        i32.const 64
        i32.add
        local.set $m
        local.get $blocks
        i32.const 1
        i32.sub
        local.set $blocks
        br $block
      end
    end

    ;; the digest to memory[0..32)
    i32.const 0
    local.get $h0
    i32.store
    i32.const 4
    local.get $h1
    i32.store
    i32.const 8
    local.get $h2
    i32.store
    i32.const 12
    local.get $h3
    i32.store
    i32.const 16
    local.get $h4
    i32.store
    i32.const 20
    local.get $h5
    i32.store
    i32.const 24
    local.get $h6
    i32.store
    i32.const 28
    local.get $h7
    i32.store
  )

  (memory $memory 1)
  (export "hash" (func $hash))
  (export "memory" (memory $memory))
)
