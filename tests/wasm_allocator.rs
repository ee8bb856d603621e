//! The package's allocator (talc, feature `talc-allocator`) in wasm, in Node and in headless Chromium: freed memory
//! is reused, so a long session (a transcriber's frames, a verifier's requests) runs in bounded memory.
#![cfg(all(
    target_arch = "wasm32",
    feature = "talc-allocator",
    not(target_feature = "atomics")
))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use js_sys::WebAssembly;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::wasm_bindgen_test;

/// The wasm memory's size in bytes (it only grows).
fn memory_bytes() -> u32 {
    wasm_bindgen::memory()
        .unchecked_into::<WebAssembly::Memory>()
        .buffer()
        .unchecked_into::<js_sys::ArrayBuffer>()
        .byte_length()
}

/// A small deterministic generator (no dependency, the same sequence in every runtime).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n
    }
}

/// 4 000 buffers of 1 B to 256 KiB (about 512 MiB in all) replace one another among 64 live ones, some grown in
/// place by `push`, with small long-lived blocks left between them: fragmentation that an allocator which never
/// reuses or never merges freed blocks turns into growth. At most 64 x 256 KiB = 16 MiB is live at once.
#[wasm_bindgen_test]
fn freed_memory_is_reused_under_churn() {
    let mut rng = Lcg(0x5eed);
    let mut live: Vec<Vec<u8>> = (0..64).map(|_| Vec::new()).collect();
    let mut pinned: Vec<Box<[u8; 24]>> = Vec::new();
    let mut total = 0usize;
    for i in 0..4_000 {
        let size = 1 + rng.below(256 * 1024);
        let mut buffer = vec![(i % 251) as u8; size];
        if i % 3 == 0 {
            buffer.extend_from_slice(&[1; 4096]);
        }
        total += buffer.len();
        if i % 50 == 0 && pinned.len() < 64 {
            pinned.push(Box::new([0; 24]));
        }
        let slot = rng.below(live.len());
        live[slot] = buffer;
    }
    // The buffers were really written and kept (not optimized away).
    let sum: usize = live.iter().map(|b| usize::from(b[0])).sum();
    assert!(sum > 0 && total > 400 * 1024 * 1024, "total {total}");
    let grown = memory_bytes();
    assert!(
        grown < 64 * 1024 * 1024,
        "wasm memory grew to {grown} bytes for at most 16 MiB live"
    );
    assert_eq!(pinned.len(), 64);
}
