;; The prompt scanner's run-of-ids kernel in WebAssembly text: the readable source of the module id-run-kernel.ts
;; encodes instruction by instruction (ONE_BODY, TWO_BODY, the sections below them). Nothing builds from this file:
;; test/core/wasm-kernel-sources.test.ts assembles it with wabt and checks it is the encoder's module, in both of its
;; forms (this one, with a memory of its own, and bindIdRunKernel's, which imports a shared memory instead), so a
;; change made to one and not the other fails there. Keep the two in step by hand.
;;
;; What it reads: a run of JSON token ids as JSON.stringify and Python's json.dumps write them, `id,` or `id, `,
;; ids of 1 to 7 digits (so below 2^32 always). Each id is one unaligned 8-byte load; its digit count comes from the
;; first non-digit byte (a bit trick, no branch), its ',' and one optional space from the same 8 bytes, its value from
;; three multiply-adds that combine digits in pairs, fours, eights. The kernel stops, before anything changed, at the
;; start of the first id it is not sure of (8+ digits, other whitespace, ']', a '-', fewer than 9 bytes left) and
;; returns where: the scanner's byte-by-byte loop (ctx-request-scanner.ts) reads from there.
;;
;; Memory (the caller's, see readIdRun): input bytes at [inputAt, inputAt + 64 KiB), ids out as u32 from outAt.
;; Every id is written to `out` and `out` moves 4 bytes; where the ids end is left in the global $outEnd.
(module
  ;; ids(i, end, out) -> where it stopped
  (type $ids_t (func (param i32 i32 i32) (result i32)))
  ;; ids2(i, split, end, out) -> where it stopped
  (type $ids2_t (func (param i32 i32 i32 i32) (result i32)))

  ;; 4 pages (256 KiB): a 64 KiB input slice and room for its ids (at most 32 Ki of them, 128 KiB). bindIdRunKernel's
  ;; form replaces this line with an import of the shared memory the scan thread's ring lives in, its size both
  ;; minimum and maximum (an import must come before the functions, hence the memory is declared up here):
  ;;   (import "k" "memory" (memory $memory <pages> <pages> shared))
  (memory $memory 4)

  ;; where the last call's ids end (a byte address)
  (global $outEnd (mut i32) (i32.const 0))

  ;; ids(i, end, out): one stream of ids from byte i, never reading at or past byte end.
  (func $ids (type $ids_t) (param $i i32) (param $end i32) (param $out i32) (result i32)
    (local $x i64)    ;; the 8 bytes at i, digit values
    (local $len i32)  ;; the id's digits
    (local $y i64)    ;; the digits being combined
    (local $w i64)    ;; x from the byte after the digits
    block $done
      loop $next
        ;; one id, or a branch to $done before anything changed
        ;; room for an id's 8 bytes and the byte after them (a 7-digit id's space), else exit
        local.get $i  i32.const 9  i32.add  local.get $end  i32.gt_u  br_if $done
        ;; x: the 8 bytes at i (one load, any alignment), each digit turned into its value (^ '0')
        local.get $i  i64.load align=1  i64.const 0x3030303030303030  i64.xor  local.tee $x
        ;; the high bit of each byte that is no digit: (b & 0x7f) + 0x76 carries into bit 7 past 9; | b marks a byte
        ;; that has bit 7 already (>= 0x80, no digit either)
        i64.const 0x7f7f7f7f7f7f7f7f  i64.and  i64.const 0x7676767676767676  i64.add  local.get $x  i64.or
        i64.const 0x8080808080808080  i64.and
        ;; len: the first such byte's index, the id's digit count (no branch); only 1 to 7 digits go on
        i64.ctz  i32.wrap_i64  i32.const 3  i32.shr_u  local.tee $len
        i32.const 1  i32.sub  i32.const 6  i32.gt_u  br_if $done
        ;; w: x from the byte after the digits on; that byte must be ',' (0x2c ^ 0x30 = 0x1c), else exit
        local.get $x  local.get $len  i32.const 3  i32.shl  i64.extend_i32_u  i64.shr_u  local.tee $w
        i64.const 0xff  i64.and  i64.const 0x1c  i64.ne  br_if $done
        ;; the store's address first: out
        local.get $out
        ;; y: the digits shifted to the top of the 8 bytes, as if led by zeros: every id has 8 digits now
        local.get $x  i64.const 64  local.get $len  i32.const 3  i32.shl  i64.extend_i32_u  i64.sub  i64.shl  local.tee $y
        ;; pairs: each 16-bit lane holds 10 * first digit + second
        i64.const 10  i64.mul  local.get $y  i64.const 8  i64.shr_u  i64.add  i64.const 0x00ff00ff00ff00ff  i64.and  local.tee $y
        ;; fours: each 32-bit lane holds 100 * pair + pair
        i64.const 100  i64.mul  local.get $y  i64.const 16  i64.shr_u  i64.add  i64.const 0x0000ffff0000ffff  i64.and  local.tee $y
        ;; the id: 10000 * four + four (below 10^7: the low 32 bits), stored at out (4-aligned)
        i64.const 10000  i64.mul  local.get $y  i64.const 32  i64.shr_u  i64.add  i32.wrap_i64
        i32.store
        ;; out += 4
        local.get $out  i32.const 4  i32.add  local.set $out
        ;; i += len + 1 (the digits and the ','), and 1 more when a space follows the ',': that byte is in w for up to
        ;; 6 digits (0x20 ^ 0x30 = 0x10), it is the byte at i + 8 for 7 digits; select picks by len, no branch
        local.get $i  local.get $len  i32.add  i32.const 1  i32.add
        local.get $i  i32.load8_u offset=8  i32.const 32  i32.eq
        local.get $w  i64.const 8  i64.shr_u  i64.const 0xff  i64.and  i64.const 0x10  i64.eq
        local.get $len  i32.const 7  i32.eq  select
        i32.add  local.set $i
        br $next
      end
    end
    local.get $out  global.set $outEnd
    local.get $i)

  ;; ids2(i, split, end, out): the ids of [i, split) (stream a) and of [split, end) (stream b) read side by side, so the
  ;; CPU overlaps the two chains of waits (each id waits for the one before: where it starts); split must be an id's
  ;; first byte. Each stream's step is $ids's, over its own locals (*_a, *_b). Stream b's ids are written after room
  ;; for all of a's and moved up behind them at the end. When a stops short of split, only a's ids count.
  (func $ids2 (type $ids2_t) (param $i_a i32) (param $split i32) (param $end_b i32) (param $out_a i32) (result i32)
    (local $i_b i32) (local $out_b i32)
    (local $end_a i32)   ;; split + 8: a steps while i_a < split (its step needs i + 9 <= end)
    (local $out_b0 i32)  ;; where b's ids start
    (local $x_a i64) (local $len_a i32) (local $y_a i64) (local $w_a i64)
    (local $x_b i64) (local $len_b i32) (local $y_b i64) (local $w_b i64)
    ;; b starts at split
    local.get $split  local.set $i_b
    ;; b's ids after room for all of a's: an id takes 2 bytes at least, so (split - i_a) / 2 ids, + 8 bytes to spare
    local.get $out_a  local.get $split  local.get $i_a  i32.sub  i32.const 1  i32.shr_u  i32.const 2  i32.shl  i32.add
    i32.const 8  i32.add  local.tee $out_b  local.set $out_b0
    local.get $split  i32.const 8  i32.add  local.set $end_a
    ;; both streams, one id each a turn, until either exits
    block $both_done
      loop $both_next
        ;; a's step
        local.get $i_a  i32.const 9  i32.add  local.get $end_a  i32.gt_u  br_if $both_done
        local.get $i_a  i64.load align=1  i64.const 0x3030303030303030  i64.xor  local.tee $x_a
        i64.const 0x7f7f7f7f7f7f7f7f  i64.and  i64.const 0x7676767676767676  i64.add  local.get $x_a  i64.or
        i64.const 0x8080808080808080  i64.and
        i64.ctz  i32.wrap_i64  i32.const 3  i32.shr_u  local.tee $len_a
        i32.const 1  i32.sub  i32.const 6  i32.gt_u  br_if $both_done
        local.get $x_a  local.get $len_a  i32.const 3  i32.shl  i64.extend_i32_u  i64.shr_u  local.tee $w_a
        i64.const 0xff  i64.and  i64.const 0x1c  i64.ne  br_if $both_done
        local.get $out_a
        local.get $x_a  i64.const 64  local.get $len_a  i32.const 3  i32.shl  i64.extend_i32_u  i64.sub  i64.shl  local.tee $y_a
        i64.const 10  i64.mul  local.get $y_a  i64.const 8  i64.shr_u  i64.add  i64.const 0x00ff00ff00ff00ff  i64.and  local.tee $y_a
        i64.const 100  i64.mul  local.get $y_a  i64.const 16  i64.shr_u  i64.add  i64.const 0x0000ffff0000ffff  i64.and  local.tee $y_a
        i64.const 10000  i64.mul  local.get $y_a  i64.const 32  i64.shr_u  i64.add  i32.wrap_i64
        i32.store
        local.get $out_a  i32.const 4  i32.add  local.set $out_a
        local.get $i_a  local.get $len_a  i32.add  i32.const 1  i32.add
        local.get $i_a  i32.load8_u offset=8  i32.const 32  i32.eq
        local.get $w_a  i64.const 8  i64.shr_u  i64.const 0xff  i64.and  i64.const 0x10  i64.eq
        local.get $len_a  i32.const 7  i32.eq  select
        i32.add  local.set $i_a
        ;; b's step
        local.get $i_b  i32.const 9  i32.add  local.get $end_b  i32.gt_u  br_if $both_done
        local.get $i_b  i64.load align=1  i64.const 0x3030303030303030  i64.xor  local.tee $x_b
        i64.const 0x7f7f7f7f7f7f7f7f  i64.and  i64.const 0x7676767676767676  i64.add  local.get $x_b  i64.or
        i64.const 0x8080808080808080  i64.and
        i64.ctz  i32.wrap_i64  i32.const 3  i32.shr_u  local.tee $len_b
        i32.const 1  i32.sub  i32.const 6  i32.gt_u  br_if $both_done
        local.get $x_b  local.get $len_b  i32.const 3  i32.shl  i64.extend_i32_u  i64.shr_u  local.tee $w_b
        i64.const 0xff  i64.and  i64.const 0x1c  i64.ne  br_if $both_done
        local.get $out_b
        local.get $x_b  i64.const 64  local.get $len_b  i32.const 3  i32.shl  i64.extend_i32_u  i64.sub  i64.shl  local.tee $y_b
        i64.const 10  i64.mul  local.get $y_b  i64.const 8  i64.shr_u  i64.add  i64.const 0x00ff00ff00ff00ff  i64.and  local.tee $y_b
        i64.const 100  i64.mul  local.get $y_b  i64.const 16  i64.shr_u  i64.add  i64.const 0x0000ffff0000ffff  i64.and  local.tee $y_b
        i64.const 10000  i64.mul  local.get $y_b  i64.const 32  i64.shr_u  i64.add  i32.wrap_i64
        i32.store
        local.get $out_b  i32.const 4  i32.add  local.set $out_b
        local.get $i_b  local.get $len_b  i32.add  i32.const 1  i32.add
        local.get $i_b  i32.load8_u offset=8  i32.const 32  i32.eq
        local.get $w_b  i64.const 8  i64.shr_u  i64.const 0xff  i64.and  i64.const 0x10  i64.eq
        local.get $len_b  i32.const 7  i32.eq  select
        i32.add  local.set $i_b
        br $both_next
      end
    end
    ;; a alone, up to split (or its first odd byte)
    block $a_done
      loop $a_next
        local.get $i_a  i32.const 9  i32.add  local.get $end_a  i32.gt_u  br_if $a_done
        local.get $i_a  i64.load align=1  i64.const 0x3030303030303030  i64.xor  local.tee $x_a
        i64.const 0x7f7f7f7f7f7f7f7f  i64.and  i64.const 0x7676767676767676  i64.add  local.get $x_a  i64.or
        i64.const 0x8080808080808080  i64.and
        i64.ctz  i32.wrap_i64  i32.const 3  i32.shr_u  local.tee $len_a
        i32.const 1  i32.sub  i32.const 6  i32.gt_u  br_if $a_done
        local.get $x_a  local.get $len_a  i32.const 3  i32.shl  i64.extend_i32_u  i64.shr_u  local.tee $w_a
        i64.const 0xff  i64.and  i64.const 0x1c  i64.ne  br_if $a_done
        local.get $out_a
        local.get $x_a  i64.const 64  local.get $len_a  i32.const 3  i32.shl  i64.extend_i32_u  i64.sub  i64.shl  local.tee $y_a
        i64.const 10  i64.mul  local.get $y_a  i64.const 8  i64.shr_u  i64.add  i64.const 0x00ff00ff00ff00ff  i64.and  local.tee $y_a
        i64.const 100  i64.mul  local.get $y_a  i64.const 16  i64.shr_u  i64.add  i64.const 0x0000ffff0000ffff  i64.and  local.tee $y_a
        i64.const 10000  i64.mul  local.get $y_a  i64.const 32  i64.shr_u  i64.add  i32.wrap_i64
        i32.store
        local.get $out_a  i32.const 4  i32.add  local.set $out_a
        local.get $i_a  local.get $len_a  i32.add  i32.const 1  i32.add
        local.get $i_a  i32.load8_u offset=8  i32.const 32  i32.eq
        local.get $w_a  i64.const 8  i64.shr_u  i64.const 0xff  i64.and  i64.const 0x10  i64.eq
        local.get $len_a  i32.const 7  i32.eq  select
        i32.add  local.set $i_a
        br $a_next
      end
    end
    ;; a stopped short of split: b's ids do not follow a's, drop them
    local.get $i_a  local.get $split  i32.ne
    if
      local.get $out_a  global.set $outEnd
      local.get $i_a
      return
    end
    ;; b alone, to its end (or its first odd byte)
    block $b_done
      loop $b_next
        local.get $i_b  i32.const 9  i32.add  local.get $end_b  i32.gt_u  br_if $b_done
        local.get $i_b  i64.load align=1  i64.const 0x3030303030303030  i64.xor  local.tee $x_b
        i64.const 0x7f7f7f7f7f7f7f7f  i64.and  i64.const 0x7676767676767676  i64.add  local.get $x_b  i64.or
        i64.const 0x8080808080808080  i64.and
        i64.ctz  i32.wrap_i64  i32.const 3  i32.shr_u  local.tee $len_b
        i32.const 1  i32.sub  i32.const 6  i32.gt_u  br_if $b_done
        local.get $x_b  local.get $len_b  i32.const 3  i32.shl  i64.extend_i32_u  i64.shr_u  local.tee $w_b
        i64.const 0xff  i64.and  i64.const 0x1c  i64.ne  br_if $b_done
        local.get $out_b
        local.get $x_b  i64.const 64  local.get $len_b  i32.const 3  i32.shl  i64.extend_i32_u  i64.sub  i64.shl  local.tee $y_b
        i64.const 10  i64.mul  local.get $y_b  i64.const 8  i64.shr_u  i64.add  i64.const 0x00ff00ff00ff00ff  i64.and  local.tee $y_b
        i64.const 100  i64.mul  local.get $y_b  i64.const 16  i64.shr_u  i64.add  i64.const 0x0000ffff0000ffff  i64.and  local.tee $y_b
        i64.const 10000  i64.mul  local.get $y_b  i64.const 32  i64.shr_u  i64.add  i32.wrap_i64
        i32.store
        local.get $out_b  i32.const 4  i32.add  local.set $out_b
        local.get $i_b  local.get $len_b  i32.add  i32.const 1  i32.add
        local.get $i_b  i32.load8_u offset=8  i32.const 32  i32.eq
        local.get $w_b  i64.const 8  i64.shr_u  i64.const 0xff  i64.and  i64.const 0x10  i64.eq
        local.get $len_b  i32.const 7  i32.eq  select
        i32.add  local.set $i_b
        br $b_next
      end
    end
    ;; b's ids moved up behind a's: memory.copy(to out_a, from out_b0, out_b - out_b0 bytes) (bulk memory)
    local.get $out_a  local.get $out_b0  local.get $out_b  local.get $out_b0  i32.sub  memory.copy
    ;; outEnd = out_a + b's bytes
    local.get $out_a  local.get $out_b  local.get $out_b0  i32.sub  i32.add  global.set $outEnd
    local.get $i_b)

  ;; bindIdRunKernel's form exports no memory (the importer has it): it drops this line
  (export "memory" (memory $memory))
  (export "ids" (func $ids))
  (export "ids2" (func $ids2))
  (export "outEnd" (global $outEnd)))
