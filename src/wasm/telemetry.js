// OpenTelemetry traces and metrics of the client, the webhook verifier and the transcriber: the core records what
// happened (an attempt and the decision taken on it, a delivery's dedupe decision, a session's reconnects) and this
// file turns those records into spans, span events, attributes and metric points. Plain ESM, no dependencies.
//
// `@opentelemetry/api` is never imported, so an entry builds and runs where it is not installed (a Worker or a page
// bundle). The API shares its registered providers across every copy of itself through one global,
// `globalThis[Symbol.for("opentelemetry.js.api.1")]`, holding `trace` (the global TracerProvider), `metrics` (the
// MeterProvider) and `context` (the ContextManager); the active span of a context is the value under the key
// `Symbol.for("OpenTelemetry Context Key SPAN")` (what the API's `createContextKey` makes). This file reads the same
// global, so it sees what `trace.setGlobalTracerProvider`, `metrics.setGlobalMeterProvider`, a `NodeSDK` or
// `@vercel/otel` registered, in every copy of the API. The `tracerProvider` and `meterProvider` options override
// them. With neither registered nor given, nothing here runs beyond one lookup of that global per call, delivery
// or session.
//
// Nothing here throws into wasm or into the caller's code: an SDK that throws loses its span, never the call. No span,
// event or attribute holds an API key, a ticket, a token, a body or a query string: the records hold none, and the
// values read here are the server's host and port, statuses, codes, ids and counts.

const API = Symbol.for("opentelemetry.js.api.1");
const SPAN_KEY = Symbol.for("OpenTelemetry Context Key SPAN");
const SCOPE = "docauto";
const INTERNAL = 0;
const CLIENT = 2;
const ERROR = 2;

/**
 * The client's methods by number: the names of their spans (`Operation` and `OPERATIONS` in
 * `src/client/telemetry.rs`, in the same order; a native test compares the two).
 */
const OPERATIONS = [
  "agents.list",
  "agents.retrieve",
  "agentRuns.create",
  "agentRuns.retrieve",
  "agentRuns.approve",
  "agentRuns.reject",
  "agentRuns.completeTask",
  "agentRuns.waitFor",
  "configs.create",
  "actions.catalog",
  "actions.create",
  "runs.list",
  "runs.retrieve",
  "runs.cancel",
  "runs.delete",
  "runs.keep",
  "runs.outputUrl",
  "runs.downloadOutput",
  "runs.waitFor",
  "files.create",
  "files.upload",
  "files.retrieve",
  "files.waitUntilReady",
  "webhooks.create",
  "webhooks.list",
  "webhooks.retrieve",
  "webhooks.update",
  "webhooks.delete",
  "webhooks.deliveries",
  "webhooks.jwks",
  "realtime.createSession",
  "extract",
  "extractBatch",
  "parse",
  "redact",
  "fill",
  "sign",
  "pipeline",
];

/** Histogram bounds in seconds: the HTTP conventions' advice, then up to an hour for waits and long sessions. */
const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60, 120, 300, 600, 1800, 3600];
const HTTP_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
const COUNTS = [1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 50];

const now = typeof performance === "object" && typeof performance?.now === "function" ? () => performance.now() : () => Date.now();

let lastProviders;

/**
 * The `tracerProvider` and `meterProvider` options of a constructor's `options`: 0 when neither is given, 1 when each
 * given one is a provider (an object with `getTracer` / `getMeter`; the pair, which the instance holds, is taken at
 * once with `heldProviders`), 2 or 3 when the `tracerProvider` or the `meterProvider` is not one. Reading an option
 * that throws (a getter, a Proxy) is a fault of that option. A number, so that a constructor given neither (the
 * common case) crosses once.
 */
export function providers(options) {
  let fault = 2;
  try {
    const tracerProvider = options?.tracerProvider ?? undefined;
    fault = 3;
    const meterProvider = options?.meterProvider ?? undefined;
    if (tracerProvider === undefined && meterProvider === undefined) return 0;
    if (tracerProvider !== undefined && typeof tracerProvider?.getTracer !== "function") return 2;
    if (meterProvider !== undefined && typeof meterProvider?.getMeter !== "function") return 3;
    lastProviders = { tracerProvider, meterProvider };
    return 1;
  } catch {
    return fault;
  }
}

/** The pair the last `providers` call found (taken once). */
export function heldProviders() {
  const held = lastProviders;
  lastProviders = undefined;
  return held;
}

/** Whether a tracer or meter provider listens: the `held` ones (`heldProviders`), or registered ones. */
export function listening(held) {
  try {
    return listeners(held) !== undefined;
  } catch {
    return false;
  }
}

// A context where no ContextManager is registered: the API's own `BaseContext`, as small.
class Context {
  constructor(values) {
    this.values = values;
  }

  getValue(key) {
    return this.values.get(key);
  }

  setValue(key, value) {
    const values = new Map(this.values);
    values.set(key, value);
    return new Context(values);
  }

  deleteValue(key) {
    const values = new Map(this.values);
    values.delete(key);
    return new Context(values);
  }
}

const ROOT = new Context(new Map());

const tracers = new WeakMap();
const meters = new WeakMap();

/**
 * What listens: the tracer and instruments of the given providers, else of the registered ones, and the registered
 * ContextManager; `undefined` when there is neither a tracer nor a meter provider.
 */
function listeners(held) {
  const api = globalThis[API];
  const registered = api !== null && typeof api === "object" && typeof api.version === "string" && api.version.startsWith("1.") ? api : undefined;
  const tracerProvider = held?.tracerProvider ?? registered?.trace;
  const meterProvider = held?.meterProvider ?? registered?.metrics;
  if (!tracerProvider && !meterProvider) return undefined;
  const contexts = registered?.context;
  return {
    tracer: tracerProvider ? cached(tracers, tracerProvider, () => tracerProvider.getTracer(SCOPE)) : undefined,
    meter: meterProvider ? cached(meters, meterProvider, () => instruments(meterProvider.getMeter(SCOPE))) : undefined,
    contexts: typeof contexts?.active === "function" && typeof contexts?.with === "function" ? contexts : undefined,
  };
}

function cached(map, key, make) {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

/** Every instrument, made once per meter provider (see docs/observability.md for each name, unit and attribute). */
function instruments(meter) {
  const histogram = (name, unit, description, bounds) => meter.createHistogram(name, { unit, description, advice: { explicitBucketBoundaries: bounds } });
  return {
    operationDuration: histogram("docauto.client.operation.duration", "s", "Duration of a client method, retries, pauses and polls included.", SECONDS),
    operationAttempts: histogram("docauto.client.operation.attempts", "{attempt}", "HTTP requests a client method sent.", COUNTS),
    requestDuration: histogram("http.client.request.duration", "s", "Duration of one HTTP request of the client.", HTTP_SECONDS),
    deliveries: meter.createCounter("docauto.webhook.deliveries", { unit: "{delivery}", description: "Webhook deliveries verified or handled, by outcome." }),
    handlerDuration: histogram("docauto.webhook.handler.duration", "s", "Duration of the handler given to handle().", SECONDS),
    sessions: meter.createCounter("docauto.realtime.sessions", { unit: "{session}", description: "Realtime sessions opened (the service's first open)." }),
    reconnects: meter.createCounter("docauto.realtime.reconnects", { unit: "{reconnect}", description: "Realtime connections opened again after a drop." }),
    audioSent: meter.createCounter("docauto.realtime.audio.sent", { unit: "s", description: "Seconds of audio sent to the service." }),
  };
}

/** Calls `fn` (once) with `context` active, where a ContextManager is registered. */
function within(contexts, context, fn) {
  if (!contexts || !context) return fn();
  let ran = false;
  const run = () => {
    ran = true;
    return fn();
  };
  try {
    return contexts.with(context, run);
  } catch (e) {
    if (ran) throw e;
    return fn();
  }
}

/** The active context (the root one where no ContextManager is registered). */
function active(contexts) {
  try {
    return contexts?.active() ?? ROOT;
  } catch {
    return ROOT;
  }
}

/** A span of `tracer` under `parent` (a context), or undefined. */
function startSpan(tracer, name, kind, attributes, parent) {
  try {
    return tracer?.startSpan(name, { kind, attributes }, parent);
  } catch {
    return undefined;
  }
}

function childContext(parent, span) {
  try {
    return span ? parent.setValue(SPAN_KEY, span) : parent;
  } catch {
    return parent;
  }
}

function end(span, attributes, failed) {
  if (!span) return;
  try {
    span.setAttributes(attributes);
    if (failed) span.setStatus({ code: ERROR });
    span.end();
  } catch {
    // the SDK's loss, not the call's
  }
}

function event(span, name, attributes) {
  try {
    span?.addEvent(name, attributes);
  } catch {
    // as above
  }
}

function record(instrument, value, attributes) {
  try {
    instrument?.record(value, attributes);
  } catch {
    // as above
  }
}

function add(instrument, value, attributes) {
  try {
    instrument?.add(value, attributes);
  } catch {
    // as above
  }
}

function traceIdOf(span) {
  try {
    const id = span?.spanContext().traceId;
    return typeof id === "string" && /^[0-9a-f]{32}$/.test(id) && id !== "0".repeat(32) ? id : undefined;
  } catch {
    return undefined;
  }
}

// The client.

/** The names of the core's reasons and failures by number (`Resend`, `Failure`, `PauseReason` in `src/client/telemetry.rs`). */
const RESENDS = ["", "timeout", "answer_lost", "not_sent", "redirect"];
const FAILURES = ["", "timeout", "connection_error", "aborted", "response_too_large"];
const PAUSES = ["", "retry_after", "backoff", "poll", "output_not_ready"];

/**
 * `server.address` and `server.port` of an absolute http(s) URL the core built (its authority: an IPv6 host without
 * its brackets, the port defaulted from the scheme; never user info, path or query); none for anything else.
 */
function server(url) {
  const scheme = /^(https?):\/\/([^/?#]*)/i.exec(url);
  if (!scheme) return {};
  const authority = scheme[2].slice(scheme[2].lastIndexOf("@") + 1);
  const parts = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(authority);
  if (!parts || !parts[1]) return {};
  const port = parts[2] ? Number(parts[2]) : scheme[1].toLowerCase() === "https" ? 443 : 80;
  return { "server.address": parts[1].replace(/^\[(.*)\]$/, "$1").toLowerCase(), "server.port": port };
}

/**
 * The observation of one client method (`op`: its number in `OPERATIONS`) by the providers `held` or registered,
 * or undefined when nobody listens. Its `traceId` goes on the method's log lines.
 */
export function observeCall(held, op) {
  try {
    const t = listeners(held);
    return t === undefined ? undefined : new CallObservation(t, OPERATIONS[op] ?? "docauto");
  } catch {
    return undefined;
  }
}

/**
 * A request of an observed method was answered or failed, or (`call` 0) the method paused between two calls: the
 * fields of the core's `Attempt` or `Pause`, from `stepper.rs`. `resend` is the status that made it a resend (100 and
 * above), else a place in `RESENDS`; a failure or pause reason is a place in `FAILURES`, `PAUSES`; 0 for none.
 */
export function attempted(observation, call, number, resends, resend, key, status, failure, pauseMs, pauseReason) {
  try {
    if (call === 0) observation.paused(pauseMs, pauseReason);
    else observation.attempted(call, number, resends, resend, key, status, failure, pauseMs, pauseReason);
  } catch {
    // the SDK's loss, not the call's
  }
}

class CallObservation {
  constructor(t, name) {
    const dot = name.lastIndexOf(".");
    this.t = t;
    this.attributes = { "docauto.operation": name, "docauto.method": name.slice(dot + 1) };
    if (dot > 0) this.attributes["docauto.resource"] = name.slice(0, dot);
    this.started = now();
    const parent = active(t.contexts);
    this.span = startSpan(t.tracer, name, INTERNAL, { ...this.attributes }, parent);
    this.context = childContext(parent, this.span);
    this.traceId = traceIdOf(this.span);
    this.attempt = undefined;
    this.attemptContext = undefined;
    this.attemptStarted = 0;
    this.method = "";
    this.server = {};
    this.requests = 0;
    this.key = false;
  }

  /**
   * An HTTP request goes out (`method`, to `url`): its span, under the method's. The server's host and port are read
   * from the URL the core built (never its query).
   */
  send(method, url) {
    this.endAttempt();
    this.attemptStarted = now();
    this.method = method;
    this.server = server(url);
    this.attempt = startSpan(this.t.tracer, method, CLIENT, { "http.request.method": method, ...this.server }, this.context);
    this.attemptContext = childContext(this.context, this.attempt);
  }

  /** Runs `fn` (the request) with its span active: spans of the runtime's `fetch` instrumentation nest under it. */
  within(fn) {
    return within(this.t.contexts, this.attemptContext, fn);
  }

  attempted(call, number, resends, resend, key, status, failure, retryMs, retryReason) {
    const attributes = { ...this.server, "http.request.method": this.method, "docauto.call": call, "docauto.attempt": number };
    const metric = { ...this.server, "http.request.method": this.method };
    if (resends > 0) attributes["http.request.resend_count"] = resends;
    if (resend) attributes["docauto.resend_reason"] = resend >= 100 ? String(resend) : RESENDS[resend];
    if (key) attributes["docauto.idempotency_key.present"] = this.key = true;
    if (status) attributes["http.response.status_code"] = metric["http.response.status_code"] = status;
    const errorType = failure ? FAILURES[failure] : status >= 400 ? String(status) : "";
    if (errorType) attributes["error.type"] = metric["error.type"] = errorType;
    if (retryReason) {
      attributes["docauto.retry.pause_ms"] = retryMs;
      attributes["docauto.retry.pause_reason"] = PAUSES[retryReason];
    }
    this.requests++;
    record(this.t.meter?.requestDuration, (now() - this.attemptStarted) / 1000, metric);
    end(this.attempt, attributes, errorType !== "");
    this.attempt = undefined;
  }

  paused(ms, reason) {
    event(this.span, "docauto.pause", { "docauto.pause.ms": ms, "docauto.pause.reason": PAUSES[reason] });
  }

  /** Ends a request span the core sent no record for (its call ended on the host's side). */
  endAttempt() {
    if (this.attempt) end(this.attempt, {}, false);
    this.attempt = undefined;
  }

  /** The method succeeded: `status`, `meta` (`{ requestId, idempotentReplay }`) of its last answer. */
  done(status, meta) {
    const attributes = { "docauto.outcome": "ok" };
    if (status) attributes["http.response.status_code"] = status;
    if (meta?.requestId) attributes["docauto.request_id"] = meta.requestId;
    if (meta?.idempotentReplay) attributes["docauto.idempotent_replay"] = true;
    this.finish(attributes, false);
  }

  /** The method failed with `error` (an `errors.js` class the core made). */
  failed(error) {
    const aborted = error?.name === "APIUserAbortError";
    const attributes = { "docauto.outcome": aborted ? "aborted" : "error", "docauto.outcome_unknown": error?.outcomeUnknown === true };
    if (typeof error?.code === "string") attributes["error.type"] = error.code;
    if (typeof error?.name === "string") attributes["docauto.error.class"] = error.name;
    if (typeof error?.status === "number") attributes["http.response.status_code"] = error.status;
    if (typeof error?.requestId === "string") attributes["docauto.request_id"] = error.requestId;
    this.finish(attributes, !aborted);
  }

  finish(attributes, failed) {
    this.endAttempt();
    attributes["docauto.attempts"] = this.requests;
    if (this.key) attributes["docauto.idempotency_key.present"] = true;
    const metric = { ...this.attributes, "docauto.outcome": attributes["docauto.outcome"] };
    if (attributes["error.type"]) metric["error.type"] = attributes["error.type"];
    record(this.t.meter?.operationDuration, (now() - this.started) / 1000, metric);
    record(this.t.meter?.operationAttempts, this.requests, metric);
    end(this.span, attributes, failed);
    this.span = undefined;
  }
}

// The webhook verifier.

/** What `observed` is told (`delivery` in `telemetry.rs`). */
const VERIFIED = 1;
const REFUSED = 2;
const EVENT = 3;
const RECORD = 10;
const ANSWERED = 20;
const FETCHED = 30;
const FETCH_FAILED = 31;

/**
 * The records of a handling by their place after `RECORD` (`Record` of `src/webhook/handle.rs`): the dedupe
 * decisions (`Dedupe`, in order), then the lease's and the mark's events.
 */
const DEDUPES = ["won", "claimed_elsewhere", "already_processed", "store_unavailable"];
const HANDLING_EVENTS = ["docauto.webhook.lease.renewed", "docauto.webhook.lease.renewal_failed", "docauto.webhook.lease.lost", "docauto.webhook.mark.retried", "docauto.webhook.mark.failed", "docauto.webhook.claim.released"];

/** The outcome of `handle` by its place after `ANSWERED` (`Outcome` of `src/webhook/handle.rs`). */
const OUTCOMES = ["handled", "duplicate", "in_progress", "handler_failed", "dedupe_unavailable"];

/** The observation of one delivery (`method`: `verify`, `verifyRequest`, `verifySync`, `handle`), or undefined. */
export function observeDelivery(held, method) {
  try {
    const t = listeners(held);
    return t === undefined ? undefined : new DeliveryObservation(t, method);
  } catch {
    return undefined;
  }
}

/** The observation of one key-set fetch of `url` (its host and port are reported, never its path or query). */
export function observeKeyFetch(held, url) {
  try {
    const t = listeners(held);
    return t === undefined ? undefined : new KeyFetchObservation(t, url);
  } catch {
    return undefined;
  }
}

/** Tells an observation what happened (`what`: one of the numbers above; `value`: what it is about). */
export function observed(observation, what, value) {
  try {
    observation.observed(what, value);
  } catch {
    // the SDK's loss, not the delivery's
  }
}

/**
 * The promise of a verification's result, which ends the delivery's span before the caller's continuation runs:
 * settles as `verified` does (the event, or the error).
 */
export function settling(observation, verified) {
  try {
    return verified.then(
      (event) => {
        observation.verified(event);
        return event;
      },
      (error) => {
        observation.refused(error);
        throw error;
      },
    );
  } catch {
    return verified;
  }
}

/**
 * `handler(event, context)` with the delivery's span active (the handler's own spans nest under it), timed: its result,
 * or a rejected promise of what it threw.
 */
export function runHandler(observation, handler, event, context) {
  const started = now();
  let result;
  try {
    result = within(observation?.t?.contexts, observation?.context, () => handler(event, context));
  } catch (e) {
    result = Promise.reject(e);
  }
  new Promise((resolve) => resolve(result)).then(
    () => observation?.handled((now() - started) / 1000, false),
    () => observation?.handled((now() - started) / 1000, true),
  );
  return result;
}

class DeliveryObservation {
  constructor(t, method) {
    this.t = t;
    this.method = method;
    this.started = now();
    const parent = active(t.contexts);
    this.span = startSpan(t.tracer, "docauto.webhook.delivery", INTERNAL, { "docauto.webhook.method": method }, parent);
    this.context = childContext(parent, this.span);
    this.attributes = {};
    this.renewals = 0;
  }

  observed(what, value) {
    if (what === VERIFIED) this.verified(value);
    else if (what === REFUSED) this.refused(value);
    else if (what === EVENT) this.event(value);
    else if (what >= ANSWERED) this.answered(OUTCOMES[what - ANSWERED], value);
    else if (what >= RECORD) this.record(what - RECORD, value);
  }

  /** The verified event's id and type (the envelope's own members). */
  event(event) {
    if (typeof event?.eventId === "string") this.attributes["docauto.webhook.event_id"] = event.eventId;
    if (typeof event?.type === "string") this.attributes["docauto.webhook.event_type"] = event.type;
  }

  /** A verification's event: with dedupe on, the claim the core took says whether it is a duplicate. */
  verified(event) {
    this.event(event);
    if (typeof event?.duplicate === "boolean") {
      this.attributes["docauto.webhook.dedupe"] = !event.duplicate ? "won" : event.inProgress ? "claimed_elsewhere" : "already_processed";
    }
    this.end("verified", undefined, false);
  }

  /** A refusal: the error's code and the status to answer (`dedupe_unavailable`: the store could not be asked). */
  refused(error) {
    if (error?.code === "dedupe_unavailable") this.attributes["docauto.webhook.dedupe"] = "store_unavailable";
    this.end("refused", error, true);
  }

  record(place, value) {
    if (place < DEDUPES.length) {
      this.attributes["docauto.webhook.dedupe"] = DEDUPES[place];
      return;
    }
    const name = HANDLING_EVENTS[place - DEDUPES.length];
    if (name === "docauto.webhook.lease.renewed") this.renewals++;
    if (name === "docauto.webhook.lease.lost") this.attributes["docauto.webhook.lease.lost"] = true;
    if (name === "docauto.webhook.mark.failed") this.attributes["docauto.webhook.mark.failed"] = true;
    event(this.span, name, name === "docauto.webhook.claim.released" ? { "docauto.webhook.released": value === true } : undefined);
  }

  handled(seconds, failed) {
    this.attributes["docauto.webhook.handler.duration_ms"] = seconds * 1000;
    const metric = { "docauto.webhook.handler.failed": failed };
    if (this.attributes["docauto.webhook.event_type"]) metric["docauto.webhook.event_type"] = this.attributes["docauto.webhook.event_type"];
    record(this.t.meter?.handlerDuration, seconds, metric);
  }

  answered(outcome, status) {
    this.attributes["http.response.status_code"] = status;
    if (this.renewals > 0) this.attributes["docauto.webhook.lease.renewals"] = this.renewals;
    this.end(outcome, undefined, status >= 500);
  }

  end(outcome, error, failed) {
    if (!this.span && !this.t.meter) return;
    const attributes = { ...this.attributes, "docauto.webhook.outcome": outcome };
    if (error) {
      if (typeof error.code === "string") attributes["error.type"] = error.code;
      if (typeof error.status === "number") attributes["http.response.status_code"] = error.status;
    } else if (outcome === "handler_failed" || outcome === "dedupe_unavailable") {
      attributes["error.type"] = outcome;
    }
    const metric = { "docauto.webhook.method": this.method, "docauto.webhook.outcome": outcome };
    if (attributes["error.type"]) metric["error.type"] = attributes["error.type"];
    if (attributes["docauto.webhook.event_type"]) metric["docauto.webhook.event_type"] = attributes["docauto.webhook.event_type"];
    add(this.t.meter?.deliveries, 1, metric);
    end(this.span, attributes, failed);
    this.span = undefined;
  }
}

class KeyFetchObservation {
  constructor(t, url) {
    this.t = t;
    this.span = startSpan(t.tracer, "docauto.webhook.keys.fetch", INTERNAL, { "http.request.method": "GET", ...server(url) }, active(t.contexts));
  }

  observed(what, value) {
    const attributes = {};
    if (what === FETCHED && typeof value === "number") attributes["http.response.status_code"] = value;
    if (what === FETCH_FAILED && typeof value?.code === "string") attributes["error.type"] = value.code;
    end(this.span, attributes, what === FETCH_FAILED);
  }
}

// The transcriber.

/** The kinds of a session's records, by number (`Record` of `src/realtime/session.rs`, `observe` of its pump). */
const OPENED = 0;
const RECONNECTING = 1;
const PAUSED = 2;
const RESUMED = 3;
const CLOSED = 4;

/** The observation of one live session (from `start()` or the first `sendAudio()` to its close), or undefined. */
export function observeSession(held) {
  try {
    const t = listeners(held);
    return t === undefined ? undefined : new SessionObservation(t);
  } catch {
    return undefined;
  }
}

/**
 * A record of an observed session: `kind` (above), two numbers (opened: reconnected 0/1; reconnecting: the attempt and
 * its delay in ms; closed: the close code and the audio sent in ms), the error's `code` and the close reason.
 */
export function sessionRecord(observation, kind, a, b, code, reason) {
  try {
    observation.record(kind, a, b, code, reason);
  } catch {
    // the SDK's loss, not the session's
  }
}

class SessionObservation {
  constructor(t) {
    this.t = t;
    this.span = startSpan(t.tracer, "docauto.realtime.session", INTERNAL, {}, active(t.contexts));
    this.reconnects = 0;
    this.opened = false;
  }

  record(kind, a, b, code, reason) {
    if (kind === OPENED) {
      const reconnected = a === 1;
      if (reconnected) {
        this.reconnects++;
        add(this.t.meter?.reconnects, 1, {});
      } else if (!this.opened) {
        add(this.t.meter?.sessions, 1, {});
      }
      this.opened = true;
      event(this.span, "docauto.realtime.open", { "docauto.realtime.reconnected": reconnected });
    } else if (kind === RECONNECTING) {
      event(this.span, "docauto.realtime.reconnecting", { "docauto.realtime.attempt": a, "docauto.realtime.delay_ms": b, "error.type": code });
    } else if (kind === PAUSED) {
      event(this.span, "docauto.realtime.paused", {});
    } else if (kind === RESUMED) {
      event(this.span, "docauto.realtime.resumed", {});
    } else if (kind === CLOSED) {
      const attributes = {
        "docauto.realtime.close.code": a,
        "docauto.realtime.close.reason": reason,
        "docauto.realtime.reconnects": this.reconnects,
        "docauto.realtime.audio.sent_s": b / 1000,
        "docauto.realtime.opened": this.opened,
      };
      if (code) attributes["error.type"] = code;
      add(this.t.meter?.audioSent, b / 1000, {});
      end(this.span, attributes, code !== "");
      this.span = undefined;
    }
  }
}
