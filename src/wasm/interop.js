// The JS half of interop.rs: reads the byte and sample arrays the application hands over through the engine's own
// intrinsics (the getters of %TypedArray%.prototype, DataView.prototype and ArrayBuffer.prototype, called on the
// value), so no getter, Proxy trap or shadowing property of the value runs and no length it claims is believed.
// Nothing here throws: a value that is not what it must be (or a detached buffer) is `undefined`, and interop.rs
// turns that into the entry's own error with its stable code. A JS exception must never unwind through Rust frames:
// it skips their destructors and the restoring of wasm's stack pointer, and the instance is corrupt after a few
// thousand of them.
//
// wasm-bindgen copies this file next to the glue (snippets/docauto-<hash>/src/wasm/interop.js). Plain ESM, no
// dependencies; every function works across realms (ArrayBuffer.isView and the intrinsic getters check internal
// slots, not prototypes).

const getter = (prototype, name) => Object.getOwnPropertyDescriptor(prototype, name).get;
const TYPED = Object.getPrototypeOf(Uint8Array.prototype);
const typedTag = getter(TYPED, Symbol.toStringTag);
const typedBuffer = getter(TYPED, "buffer");
const typedOffset = getter(TYPED, "byteOffset");
const typedBytes = getter(TYPED, "byteLength");
const typedLength = getter(TYPED, "length");
const viewBuffer = getter(DataView.prototype, "buffer");
const viewOffset = getter(DataView.prototype, "byteOffset");
const viewBytes = getter(DataView.prototype, "byteLength");
const bufferBytes = getter(ArrayBuffer.prototype, "byteLength");

/**
 * The bytes of an ArrayBuffer or of any ArrayBuffer view (Uint8Array, Buffer, DataView, ...), of any realm, as a new
 * Uint8Array over the same memory (nothing is copied); `undefined` for anything else, or when the buffer is detached.
 */
export function bytesOf(value) {
  try {
    if (ArrayBuffer.isView(value)) {
      const typed = typedTag.call(value) !== undefined;
      const buffer = (typed ? typedBuffer : viewBuffer).call(value);
      const offset = (typed ? typedOffset : viewOffset).call(value);
      const length = (typed ? typedBytes : viewBytes).call(value);
      return new Uint8Array(buffer, offset, length);
    }
    // Throws unless `value` is an ArrayBuffer (its length is read from its internal slot, not a property).
    bufferBytes.call(value);
    return new Uint8Array(value);
  } catch {
    return undefined;
  }
}

/**
 * Mono samples as a new view over the same memory: a Float32Array or an Int16Array (of any realm); `undefined` for
 * anything else, including an object that only claims to be one through `Symbol.toStringTag`.
 */
export function samplesOf(value) {
  try {
    if (!ArrayBuffer.isView(value)) return undefined;
    const tag = typedTag.call(value);
    const Samples = tag === "Float32Array" ? Float32Array : tag === "Int16Array" ? Int16Array : undefined;
    if (Samples === undefined) return undefined;
    return new Samples(typedBuffer.call(value), typedOffset.call(value), typedLength.call(value));
  } catch {
    return undefined;
  }
}

/**
 * A promise of this module that settles as `value` does: a plain value, a promise, or any thenable, however hostile
 * (a throwing `then` getter, a Promise with its own throwing `then` or `constructor`): its failure rejects the promise
 * rather than throwing here. wasm-bindgen-futures calls `then` on what it awaits, so nothing else is awaited.
 */
export function settled(value) {
  return new Promise((resolve) => resolve(value));
}

/**
 * How `value` settled, as a promise that never rejects: `[true, result]` when it fulfilled, `[false, reason]` when it
 * rejected (a plain value, a promise or any thenable, as in `settled`).
 */
export function outcome(value) {
  return new Promise((resolve) => resolve(value)).then((v) => [true, v], (e) => [false, e]);
}

/**
 * The plain-data part of an options object as JSON text, for the core's options decoder (interop.rs's
 * `plain_options_text`): a copy without prototype of its own enumerable members (`Object.assign`: every getter runs
 * once, here), without the `handles` (a comma-separated list of names: the JS functions and objects the host keeps).
 * A non-finite number (which JSON cannot carry, and which would otherwise read as "not given") becomes the string
 * `"NaN"` or `"Infinity"`, so the core reports it as the wrong type at its name. `undefined` when copying or
 * `JSON.stringify` throws (a getter, a Proxy trap, a cycle, a `BigInt`, a `toJSON`), or a data member is a function
 * or a symbol. One call, where copying from the wasm side takes about twenty crossings of the boundary.
 */
export function plainOptionsText(options, handles) {
  try {
    const data = Object.assign(Object.create(null), options);
    for (const name of handles === "" ? [] : handles.split(",")) delete data[name];
    for (const name of Object.keys(data)) {
      const value = data[name];
      if (typeof value === "function" || typeof value === "symbol") return undefined;
      if (typeof value === "number" && !Number.isFinite(value)) data[name] = Number.isNaN(value) ? "NaN" : "Infinity";
    }
    const text = JSON.stringify(data);
    return typeof text === "string" ? text : undefined;
  } catch {
    return undefined;
  }
}

/** A fencing token: a random UUID (`crypto.randomUUID`), or 32 hex digits of `crypto.getRandomValues` or `Math.random`
 * where the runtime lacks it (a page outside a secure context has no `randomUUID`). Unique, not secret. */
export function token() {
  const bytes = new Uint8Array(16);
  try {
    if (typeof crypto?.randomUUID === "function") return String(crypto.randomUUID());
    crypto.getRandomValues(bytes);
  } catch {
    for (let i = 0; i < 16; i++) bytes[i] = Math.floor(Math.random() * 256);
  }
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
