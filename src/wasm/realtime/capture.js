// The JS host side of RealtimeTranscriber's capture and of the session's other waits (and the one property by which a
// transcriber's JS object holds the caller's values, `hold`): plain ESM, no dependencies.
//
// wasm-bindgen copies this file next to the glue (snippets/docauto-<hash>/src/wasm/realtime/capture.js); capture.rs
// and session.rs bind it. It only sequences the browser's promises (getUserMedia, AudioContext, AudioWorklet) and
// reports back through one callback per wait: every decision (what a failure means, what happens next) stays in
// Rust, in the core's `Session`. Written in JS rather than as Rust async functions over hand-declared bindings,
// which cost about 19 KB of wasm, 6.6 KB gzip (the futures executor, the state machines, one import shim per method).
//
// Failures are reported as `{ kind, detail }`: `media` (getUserMedia refused; detail: the DOMException's name),
// `no_device` (no navigator.mediaDevices, or a stream without audio track), `not_a_stream`, `graph` (detail: what
// this runtime lacks), `suspended` (the AudioContext did not run within the session's limit). capture.rs turns them
// into RealtimeError codes.
// Named values shared with worklet.js and capture.rs: change them together.
const PROCESSOR = "docauto-capture";
const WORKLET_BLOCK_MS = 20;
const STOP = "stop";
const FLUSHED = "flushed";
const FLUSH_WAIT_MS = 250;

const fail = (kind, detail = "") => ({ kind, detail });

/** Stops every track of `stream` (a microphone stream the transcriber opened). */
function stopTracks(stream) {
  try {
    for (const track of stream.getTracks()) track.stop();
  } catch {
    // Not a stream: nothing to stop.
  }
}

/**
 * Opens the microphone with `constraints` (a getUserMedia `audio` constraint object) or, when `stream` is given,
 * captures it (it stays the caller's: its tracks are not stopped). Calls `done(capture, undefined)` or
 * `done(undefined, { kind, detail })` exactly once. `startMs` bounds the wait for the AudioContext to run (0: no
 * bound). `onBlock(Float32Array, rate)` gets each mono block of about 20 ms; `onEnded()` is called when an audio
 * track ends by itself (device unplugged or revoked).
 */
export function openCapture(constraints, stream, workletSource, startMs, onBlock, onEnded, done) {
  open(constraints, stream, workletSource, startMs, onBlock, onEnded).then(
    (capture) => done(capture, undefined),
    (error) => done(undefined, isFailure(error) ? error : fail("graph", "unexpected error")),
  );
}

/** Whether `error` is one of ours (`{ kind, detail }`); a caller's stream may throw anything, a Proxy included. */
function isFailure(error) {
  try {
    return error !== null && typeof error === "object" && typeof error.kind === "string";
  } catch {
    return false;
  }
}

async function open(constraints, stream, workletSource, startMs, onBlock, onEnded) {
  const owned = !stream;
  if (owned) {
    const devices = globalThis.navigator?.mediaDevices;
    if (devices === null || typeof devices !== "object") throw fail("no_device");
    try {
      stream = await devices.getUserMedia({ audio: constraints });
    } catch (e) {
      throw fail("media", String(e?.name ?? ""));
    }
  }
  try {
    return await build(stream, owned, workletSource, startMs, onBlock, onEnded);
  } catch (e) {
    if (owned) stopTracks(stream);
    throw e;
  }
}

async function build(stream, owned, workletSource, startMs, onBlock, onEnded) {
  let tracks;
  try {
    tracks = stream.getAudioTracks();
  } catch {
    throw fail("not_a_stream");
  }
  if (tracks.length === 0) throw fail("no_device");
  const Context = globalThis.AudioContext ?? globalThis.webkitAudioContext;
  let context;
  try {
    context = new Context();
  } catch {
    throw fail("graph", "no AudioContext");
  }
  try {
    const capture = await graph(context, stream, workletSource, startMs, onBlock);
    for (const track of tracks) track.addEventListener("ended", onEnded);
    return { ...capture, context, stream, owned, tracks, onEnded };
  } catch (e) {
    try {
      await context.close();
    } catch {
      // Already closed.
    }
    throw e;
  }
}

async function graph(context, stream, workletSource, startMs, onBlock) {
  const rate = context.sampleRate;
  if (!(Number.isFinite(rate) && rate > 0)) throw fail("graph", "the AudioContext has no sample rate");
  // An autoplay policy can hold `resume()` unsettled for good (WebKit: no user gesture and no capture running, as
  // for a stream given without a click): the wait is bounded, and a context still not running is reported.
  if (!(await running(context, startMs))) throw fail("suspended");
  const worklet = context.audioWorklet;
  if (worklet === null || typeof worklet !== "object") {
    throw fail("graph", "no AudioWorklet (a secure context is required)");
  }
  let blob;
  try {
    blob = new Blob([workletSource], { type: "text/javascript" });
  } catch {
    throw fail("graph", "no Blob");
  }
  let url;
  try {
    url = URL.createObjectURL(blob);
  } catch {
    throw fail("graph", "no URL.createObjectURL");
  }
  try {
    await worklet.addModule(url);
  } catch {
    throw fail("graph", "the AudioWorklet module did not load");
  } finally {
    URL.revokeObjectURL(url);
  }
  const step = (what, f) => {
    try {
      return f();
    } catch {
      throw fail("graph", what);
    }
  };
  const source = step("createMediaStreamSource failed", () => context.createMediaStreamSource(stream));
  const blockSamples = Math.floor((rate * WORKLET_BLOCK_MS) / 1000);
  const node = step(
    "no AudioWorkletNode",
    () =>
      new AudioWorkletNode(context, PROCESSOR, {
        numberOfInputs: 1,
        numberOfOutputs: 0,
        processorOptions: { blockSamples },
      }),
  );
  const port = step("no worklet port", () => node.port);
  step("cannot listen to the worklet port", () => {
    port.onmessage = (event) => {
      if (event.data instanceof Float32Array) onBlock(event.data, rate);
    };
  });
  step("cannot connect the stream to the worklet", () => source.connect(node));
  return { source, node, port };
}

/** Whether `context` runs once its `resume()` settled, or `ms` passed (0: no limit). */
function running(context, ms) {
  let timer;
  const resumed = new Promise((resolve) => resolve(context.resume())).then(
    () => true,
    () => false,
  );
  const waited = ms > 0 ? Promise.race([resumed, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]) : resumed;
  return waited.then(() => {
    clearTimeout(timer);
    return context.state === "running";
  });
}

/** Calls `done()` in a microtask (after the running effects, as a settled promise would). */
export function later(done) {
  Promise.resolve().then(() => done());
}

/** Asks the worklet for its partial block and calls `done()` once it arrived (at most 250 ms later). */
export function flushCapture(capture, done) {
  if (!capture) {
    later(done);
    return;
  }
  const { port } = capture;
  let timer;
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    try {
      port.removeEventListener("message", listener);
    } catch {
      // A closed port.
    }
    done();
  };
  const listener = (event) => {
    if (event.data === FLUSHED) finish();
  };
  timer = setTimeout(finish, FLUSH_WAIT_MS);
  try {
    port.addEventListener("message", listener);
    port.postMessage(STOP);
  } catch {
    later(finish);
  }
}

/** Tears the graph down (worklet disconnected, port closed, owned tracks stopped); resolves when the context closed. */
export async function closeCapture(capture) {
  const { tracks, onEnded, port, source, node, stream, owned, context } = capture;
  for (const track of tracks) {
    try {
      track.removeEventListener("ended", onEnded);
    } catch {
      // A track of another realm: it ends with the stream.
    }
  }
  const steps = [() => (port.onmessage = null), () => port.close(), () => source.disconnect(), () => node.disconnect()];
  for (const f of steps) {
    try {
      f();
    } catch {
      // Already torn down.
    }
  }
  if (owned) stopTracks(stream);
  try {
    await context.close();
  } catch {
    // Already closed.
  }
}

/**
 * Calls `getUrl()` and then `done(url)` with the string it gave (or resolved to), or `done(undefined)`. What it
 * answers is awaited through a promise of this module: a thenable whose `then` throws (or a Promise with its own
 * throwing `then`) rejects it, never throws here.
 */
export function fetchUrl(getUrl, done) {
  let value;
  try {
    const answer = getUrl();
    value = new Promise((resolve) => resolve(answer));
  } catch {
    value = Promise.resolve(undefined);
  }
  value.then(
    (url) => done(typeof url === "string" ? url : undefined),
    () => done(undefined),
  );
}

const HELD = Symbol("held");

/**
 * Makes `object` (a transcriber's JS object) hold `value` (the caller's event target, getUrl and WebSocket): a
 * property keyed by a symbol of this module, not enumerable. Returns whether it could (false for a frozen object).
 */
export function hold(object, value) {
  try {
    Object.defineProperty(object, HELD, { value });
    return true;
  } catch {
    return false;
  }
}

/** Calls each of `waiters` once every promise of `pending` settled. */
export function afterAll(pending, waiters) {
  Promise.allSettled(pending).then(() => {
    for (const resolve of waiters) resolve();
  });
}
