// Types of this entry, generated from the wasm-bindgen declarations of its own module.
// The generated classes declare `[Symbol.dispose]()` (explicit resource management): pull in its lib declaration so
// projects compiling with an older `lib` setting still type-check.
/// <reference lib="esnext.disposable" />
// @EXPORTS@
