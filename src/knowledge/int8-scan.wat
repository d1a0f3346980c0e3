;; The int8 candidate scan's inner loop (see quantized-vectors.ts), with 128-bit SIMD.
;; Regenerate int8-scan-wasm.ts after editing: `node scripts/build-int8-scan.mjs`.
;;
;; A block holds `BLOCK` rows stored dimension by dimension (each dimension a run of
;; the block). The query is a list of dimension pairs, each 12 bytes in `terms`:
;; the two runs' byte offsets in the block (i32 each) and their weights (two i16,
;; the first in the low half). For 16 rows at a time, the two runs' bytes are
;; interleaved, widened to i16 and multiplied by the weight pair with
;; i32x4.dot_i16x8_s, which adds each row's two products: exact integer sums, so
;; the order of the additions cannot change a score.
(module
  (memory (import "env" "memory") 1)

  ;; Writes, for rows [0, rows) of the block at `block` (rows a multiple of 16), the
  ;; i32 dot product of each row with the query to `out` (4 bytes a row).
  (func (export "scan") (param $block i32) (param $rows i32) (param $terms i32) (param $pairs i32) (param $out i32)
    (local $row i32) (local $term i32) (local $end i32) (local $at i32)
    (local $weights v128) (local $a v128) (local $b v128) (local $lo v128) (local $hi v128)
    (local $acc0 v128) (local $acc1 v128) (local $acc2 v128) (local $acc3 v128)
    (local.set $end (i32.add (local.get $terms) (i32.mul (local.get $pairs) (i32.const 12))))
    (block $done
      (loop $rows_loop
        (br_if $done (i32.ge_u (local.get $row) (local.get $rows)))
        (local.set $acc0 (v128.const i32x4 0 0 0 0))
        (local.set $acc1 (v128.const i32x4 0 0 0 0))
        (local.set $acc2 (v128.const i32x4 0 0 0 0))
        (local.set $acc3 (v128.const i32x4 0 0 0 0))
        (local.set $at (i32.add (local.get $block) (local.get $row)))
        (local.set $term (local.get $terms))
        (block $terms_done
          (loop $terms_loop
            (br_if $terms_done (i32.ge_u (local.get $term) (local.get $end)))
            (local.set $a (v128.load (i32.add (local.get $at) (i32.load (local.get $term)))))
            (local.set $b (v128.load (i32.add (local.get $at) (i32.load offset=4 (local.get $term)))))
            (local.set $weights (i32x4.splat (i32.load offset=8 (local.get $term))))
            ;; Rows 0-7 and 8-15, each row's two bytes side by side.
            (local.set $lo (i8x16.shuffle 0 16 1 17 2 18 3 19 4 20 5 21 6 22 7 23 (local.get $a) (local.get $b)))
            (local.set $hi (i8x16.shuffle 8 24 9 25 10 26 11 27 12 28 13 29 14 30 15 31 (local.get $a) (local.get $b)))
            (local.set $acc0 (i32x4.add (local.get $acc0) (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $lo)) (local.get $weights))))
            (local.set $acc1 (i32x4.add (local.get $acc1) (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $lo)) (local.get $weights))))
            (local.set $acc2 (i32x4.add (local.get $acc2) (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $hi)) (local.get $weights))))
            (local.set $acc3 (i32x4.add (local.get $acc3) (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $hi)) (local.get $weights))))
            (local.set $term (i32.add (local.get $term) (i32.const 12)))
            (br $terms_loop)))
        (local.set $at (i32.add (local.get $out) (i32.shl (local.get $row) (i32.const 2))))
        (v128.store (local.get $at) (local.get $acc0))
        (v128.store offset=16 (local.get $at) (local.get $acc1))
        (v128.store offset=32 (local.get $at) (local.get $acc2))
        (v128.store offset=48 (local.get $at) (local.get $acc3))
        (local.set $row (i32.add (local.get $row) (i32.const 16)))
        (br $rows_loop)))))
