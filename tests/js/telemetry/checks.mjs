// The spans, events and metric points of the client and the webhook verifier, read from the real OpenTelemetry JS
// SDK's in-memory exporters, in any runtime (Node, Deno, Bun, workerd): `runChecks` registers the SDK globally,
// drives the package against a scripted server (`server.mjs`, started by the driver in Node), and checks what the
// exporters received. The oracle is the SDK itself (span parents, attribute names of @opentelemetry/semantic-
// conventions) and the scripted server's own view of what happened.
import { trace, metrics, context, SpanStatusCode } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { MeterProvider, InMemoryMetricExporter, PeriodicExportingMetricReader, AggregationTemporality } from "@opentelemetry/sdk-metrics";
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_REQUEST_RESEND_COUNT,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_ERROR_TYPE,
  METRIC_HTTP_CLIENT_REQUEST_DURATION,
} from "@opentelemetry/semantic-conventions";

/** Values planted where a careless implementation would copy them into telemetry. */
export const SECRETS = {
  key: "sk_test_PLANTEDKEY9f8e7d6c5b4a",
  ticket: "TICKETSECRET3a2b1c",
  bodyMarker: "BODYMARKER4d5e6f",
  answerMarker: "ANSWERMARKER7a8b9c",
  query: "SIGQUERYSECRET1f2e3d",
  jwksQuery: "JWKSQUERYSECRET5c6d",
  eventMarker: "EVENTMARKER0a9b8c",
};

/** A tiny runner: `await t.test(name, fn)`, lines as `ok  name` / `FAIL name: why`. */
function runner(log) {
  const r = { passed: 0, failed: 0 };
  r.test = async (name, fn) => {
    try {
      await fn();
      r.passed++;
      log(`ok   ${name}`);
    } catch (e) {
      r.failed++;
      log(`FAIL ${name}: ${e?.stack ?? e}`);
    }
  };
  return r;
}

function assert(ok, message) {
  if (!ok) throw new Error(message);
}

function equal(actual, expected, message) {
  if (actual !== expected) throw new Error(`${message}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

const parentOf = (span) => span.parentSpanContext?.spanId ?? span.parentSpanId;
const idOf = (span) => span.spanContext().spanId;
const shown = (spans) => JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, parent: parentOf(s), id: idOf(s) })));

/** The SDK, registered globally: tracer and meter providers with in-memory exporters, and `contextManager` if given. */
export function registerSdk(contextManager) {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(meterProvider);
  if (contextManager) context.setGlobalContextManager(contextManager);
  return {
    spans,
    tracerProvider,
    meterProvider,
    /** Every data point exported so far: `{ name, unit, attributes, value }`. */
    async points() {
      await reader.forceFlush();
      const out = [];
      for (const rm of metricExporter.getMetrics()) {
        for (const sm of rm.scopeMetrics) {
          for (const m of sm.metrics) {
            for (const p of m.dataPoints) out.push({ name: m.descriptor.name, unit: m.descriptor.unit, attributes: p.attributes, value: p.value });
          }
        }
      }
      return out;
    },
    async shutdown() {
      trace.disable();
      metrics.disable();
      if (contextManager) context.disable();
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

/**
 * Runs every check: `docauto` and `webhooks` are the package's entries, `testing` its test signer, `base` the scripted
 * server's URL with a prefix of this runtime's own (`server.mjs`), `contextManager` the runtime's context manager
 * (none in workerd: parents then come from the package's own contexts), `log` a line printer.
 */
export async function runChecks({ docauto, webhooks, realtime, testing, base, contextManager, log }) {
  const t = runner(log);
  const sdk = registerSdk(contextManager);
  const logLines = [];
  const logger = { debug: (l) => logLines.push(l), info: (l) => logLines.push(l), warn: (l) => logLines.push(l), error: (l) => logLines.push(l) };
  const client = new docauto.DocAuto({ apiKey: SECRETS.key, baseUrl: base, logLevel: "debug", logger, maxRetries: 2 });
  const finished = () => sdk.spans.getFinishedSpans();
  const named = (name) => finished().filter((s) => s.name === name);
  const childrenOf = (span) => finished().filter((s) => parentOf(s) === idOf(span));

  await t.test("a call retried after a lost answer is one call span with two attempt spans, the second saying why", async () => {
    const run = await client.agentRuns.create({ agent: "agt_1", files: [{ url: "https://files.example.com/a.pdf" }], metadata: { note: SECRETS.bodyMarker } });
    equal(run.id, "arn_1", "the resend's answer");
    const calls = named("agentRuns.create");
    equal(calls.length, 1, `one call span (${shown(finished())})`);
    const [call] = calls;
    const attempts = childrenOf(call).sort((a, b) => a.attributes["docauto.attempt"] - b.attributes["docauto.attempt"]);
    equal(attempts.length, 2, `two attempt spans under the call (${shown(finished())})`);
    const [first, second] = attempts;
    for (const a of attempts) {
      equal(a.name, "POST", "an attempt span is named by its method");
      equal(a.kind, 2, "an attempt span is a CLIENT span");
      equal(a.attributes[ATTR_HTTP_REQUEST_METHOD], "POST", ATTR_HTTP_REQUEST_METHOD);
      equal(a.attributes[ATTR_SERVER_ADDRESS], "127.0.0.1", ATTR_SERVER_ADDRESS);
      equal(a.attributes[ATTR_SERVER_PORT], Number(new URL(base).port), ATTR_SERVER_PORT);
      equal(a.attributes["docauto.idempotency_key.present"], true, "a POST carries an idempotency key");
    }
    equal(first.attributes[ATTR_ERROR_TYPE], "connection_error", "the lost answer");
    equal(first.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE], undefined, "no status without an answer");
    equal(first.status.code, SpanStatusCode.ERROR, "a failed attempt's status");
    equal(first.attributes["docauto.retry.pause_reason"], "backoff", "the pause after it");
    assert(first.attributes["docauto.retry.pause_ms"] > 0, "the pause's length");
    equal(second.attributes[ATTR_HTTP_REQUEST_RESEND_COUNT], 1, ATTR_HTTP_REQUEST_RESEND_COUNT);
    equal(second.attributes["docauto.resend_reason"], "answer_lost", "why it was sent again");
    equal(second.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE], 201, "the resend's status");
    equal(call.attributes["docauto.outcome"], "ok", "outcome");
    equal(call.attributes["docauto.attempts"], 2, "attempts");
    equal(call.attributes["docauto.resource"], "agentRuns", "resource");
    equal(call.attributes["docauto.method"], "create", "method");
    equal(call.attributes["docauto.request_id"], "req_created", "the answer's request id");
    equal(call.attributes["docauto.idempotency_key.present"], true, "the key's presence");
    equal(call.kind, 0, "the call span is INTERNAL");
    const traceId = call.spanContext().traceId;
    const lines = logLines.filter((l) => l.includes("/v1/agent-runs"));
    assert(lines.length >= 3, `debug lines of the call: ${JSON.stringify(logLines)}`);
    for (const line of lines) assert(line.endsWith(` trace_id=${traceId}`), `the call's trace id on its log line: ${line}`);
    const points = await sdk.points();
    const duration = points.find((p) => p.name === "docauto.client.operation.duration" && p.attributes["docauto.operation"] === "agentRuns.create");
    assert(duration && duration.unit === "s" && duration.value.count === 1, `the call's duration (${JSON.stringify(points)})`);
    equal(duration.attributes["docauto.outcome"], "ok", "the duration's outcome");
    const tries = points.find((p) => p.name === "docauto.client.operation.attempts" && p.attributes["docauto.operation"] === "agentRuns.create");
    equal(tries?.value.sum, 2, "attempts per call");
    const http = points.filter((p) => p.name === METRIC_HTTP_CLIENT_REQUEST_DURATION && p.attributes[ATTR_HTTP_REQUEST_METHOD] === "POST");
    equal(http.reduce((n, p) => n + p.value.count, 0), 2, "one request duration per attempt");
  });

  await t.test("a wait's polls are children of its span, with the pause between them", async () => {
    const run = await client.agentRuns.waitFor("arn_1");
    equal(run.status, "completed", "the wait's answer");
    const [wait] = named("agentRuns.waitFor");
    assert(wait, `a span named agentRuns.waitFor (${shown(finished())})`);
    const polls = childrenOf(wait).sort((a, b) => a.attributes["docauto.call"] - b.attributes["docauto.call"]);
    equal(polls.length, 2, `two polls under the wait (${shown(finished())})`);
    equal(polls.map((p) => p.attributes["docauto.call"]).join(), "1,2", "the polls' numbers");
    for (const p of polls) equal(p.name, "GET", "a poll is a GET");
    const pauses = wait.events.filter((e) => e.name === "docauto.pause");
    equal(pauses.length, 1, "one pause between the polls");
    equal(pauses[0].attributes["docauto.pause.reason"], "poll", "its reason");
    equal(pauses[0].attributes["docauto.pause.ms"], 50, "the pause the first answer's retry-after-ms asked");
  });

  await t.test("a failed call's span has the error's class, code and outcomeUnknown", async () => {
    let error;
    try {
      await client.runs.retrieve("exr_missing");
    } catch (e) {
      error = e;
    }
    equal(error?.code, "not_found", "the call fails");
    const [call] = named("runs.retrieve");
    assert(call, `a span named runs.retrieve (${shown(finished())})`);
    equal(call.status.code, SpanStatusCode.ERROR, "status");
    equal(call.attributes["docauto.outcome"], "error", "outcome");
    equal(call.attributes[ATTR_ERROR_TYPE], "not_found", "error.type is the code");
    equal(call.attributes["docauto.error.class"], "NotFoundError", "class");
    equal(call.attributes["docauto.outcome_unknown"], false, "outcomeUnknown");
    equal(call.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE], 404, "status code");
    equal(call.attributes["docauto.request_id"], "req_missing", "request id");
  });

  await t.test("a call under an active span is its child, and the providers given as options win", async () => {
    const tracer = trace.getTracer("test");
    const parent = tracer.startSpan("user-request");
    const withParent = trace.setSpan(context.active(), parent);
    await context.with(withParent, () => (contextManager ? client.agents.list() : Promise.resolve()));
    parent.end();
    if (contextManager) {
      const [call] = named("agents.list");
      equal(parentOf(call), idOf(parent), "the call's parent is the active span");
    }
    const own = new InMemorySpanExporter();
    const ownProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(own)] });
    const mine = new docauto.DocAuto({ apiKey: SECRETS.key, baseUrl: base, logLevel: "off", tracerProvider: ownProvider });
    const before = named("agents.retrieve").length;
    await mine.agents.retrieve("agt_1");
    equal(own.getFinishedSpans().filter((s) => s.name === "agents.retrieve").length, 1, "the option's provider got the span");
    equal(named("agents.retrieve").length, before, "the global provider did not");
    let refused;
    try {
      new docauto.DocAuto({ apiKey: SECRETS.key, baseUrl: base, tracerProvider: {} });
    } catch (e) {
      refused = e;
    }
    equal(refused?.code, "invalid_config", "a tracerProvider without getTracer is refused");
    assert(/tracerProvider/.test(refused.message), `the message names the option: ${refused?.message}`);
  });

  await t.test("a download through a signed URL and a realtime session with a ticket leave no query or body in telemetry", async () => {
    const bytes = await client.runs.downloadOutput("exr_1", "out.pdf");
    equal(new TextDecoder().decode(bytes), SECRETS.answerMarker, "the downloaded bytes");
    const session = await client.realtime.createSession({});
    assert(session.url.includes(SECRETS.ticket), "the session's URL holds the ticket");
    const run = await client.extract({ files: [{ url: `https://files.example.com/a.pdf?token=${SECRETS.query}` }], schema: { type: "object", properties: { total: { type: "number", description: SECRETS.bodyMarker } } } });
    equal(run.note, SECRETS.answerMarker, "the answer's body");
    const [download] = named("runs.downloadOutput");
    const hosts = childrenOf(download).map((s) => `${s.attributes[ATTR_SERVER_ADDRESS]}:${s.attributes[ATTR_SERVER_PORT]}`);
    equal(hosts.length, 2, `the output route and the signed URL (${shown(finished())})`);
  });

  // Webhooks: deliveries signed by the test signer, key sets fetched through a `fetch` option.
  const signer = await testing.TestSigner.generate();
  const jwksUrl = `https://keys.example.com/.well-known/jwks.json?token=${SECRETS.jwksQuery}`;
  const keyFetch = async () => new Response(JSON.stringify(signer.jwks), { headers: { "content-type": "application/json" } });
  const store = fencedStore();
  // A lease of a second: renewed every third of a second while the first delivery's handler runs.
  const first = new webhooks.WebhookVerifier({ jwksUrl, fetch: keyFetch, dedupe: store, claimTtlSeconds: 1 });
  const second = new webhooks.WebhookVerifier({ jwksUrl, fetch: keyFetch, dedupe: store });
  const delivery = await signer.sign({ type: "agent_run.completed", processingId: "arn_1", eventId: "evt_dedupe", data: { object: "agent_run", id: "arn_1", status: "completed", metadata: { note: SECRETS.eventMarker } } });

  await t.test("a 409 delivery shows the dedupe decision: another instance holds the claim", async () => {
    let release;
    const held = new Promise((r) => (release = r));
    let started;
    const running = new Promise((r) => (started = r));
    const firstAnswer = first.handle({ body: delivery.body, signature: delivery.signature }, async () => {
      started();
      await held;
    });
    await running;
    const answer = await second.handle({ body: delivery.body, signature: delivery.signature }, async () => {
      throw new Error("the duplicate's handler must not run");
    });
    equal(answer.status, 409, "the duplicate's answer");
    await new Promise((r) => setTimeout(r, 450));
    release();
    equal((await firstAnswer).status, 200, "the first delivery's answer");
    const spans = named("docauto.webhook.delivery");
    const duplicate = spans.find((s) => s.attributes["docauto.webhook.dedupe"] === "claimed_elsewhere");
    assert(duplicate, `a delivery span with the dedupe decision claimed_elsewhere (${shown(spans)})`);
    equal(duplicate.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE], 409, "the status answered");
    equal(duplicate.attributes["docauto.webhook.event_id"], "evt_dedupe", "event id");
    equal(duplicate.attributes["docauto.webhook.event_type"], "agent_run.completed", "event type");
    equal(duplicate.attributes["docauto.webhook.outcome"], "in_progress", "outcome");
    const won = spans.find((s) => s.attributes["docauto.webhook.dedupe"] === "won");
    assert(won, "the first delivery's span says it won the claim");
    equal(won.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE], 200, "the first's status");
    assert(won.attributes["docauto.webhook.handler.duration_ms"] >= 400, "the handler's duration");
    assert(won.attributes["docauto.webhook.lease.renewals"] >= 1, `the lease was renewed (${JSON.stringify(won.attributes)})`);
    assert(won.events.some((e) => e.name === "docauto.webhook.lease.renewed"), "a renewal is an event of the delivery");
    equal(won.attributes["docauto.webhook.lease.lost"], undefined, "the lease was kept");
    const fetches = named("docauto.webhook.keys.fetch");
    assert(fetches.length >= 1, `a key set fetch span (${shown(finished())})`);
    equal(fetches[0].attributes[ATTR_SERVER_ADDRESS], "keys.example.com", "the key set's host");
    const points = await sdk.points();
    const counted = points.filter((p) => p.name === "docauto.webhook.deliveries");
    assert(counted.some((p) => p.attributes["docauto.webhook.outcome"] === "in_progress" && p.value === 1), `deliveries by outcome (${JSON.stringify(counted)})`);
  });

  await t.test("a refused delivery's span has the verification code and the status to answer", async () => {
    const tampered = delivery.body.replace(SECRETS.eventMarker, "tampered");
    const answer = await first.handle({ body: tampered, signature: delivery.signature }, async () => {});
    equal(answer.status, 400, "refused");
    let error;
    try {
      await first.verify(tampered, delivery.signature);
    } catch (e) {
      error = e;
    }
    equal(error?.code, "body_mismatch", "verify refuses it too");
    const refused = named("docauto.webhook.delivery").filter((s) => s.attributes[ATTR_ERROR_TYPE] === "body_mismatch");
    equal(refused.length, 2, `handle's and verify's spans (${shown(named("docauto.webhook.delivery"))})`);
    for (const s of refused) {
      equal(s.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE], 400, "the status to answer");
      equal(s.attributes["docauto.webhook.outcome"], "refused", "outcome");
      equal(s.status.code, SpanStatusCode.ERROR, "status");
    }
    const event = await second.verify(delivery.body, delivery.signature);
    equal(event.duplicate, true, "the processed event is a duplicate now");
    const verified = named("docauto.webhook.delivery").filter((s) => s.attributes["docauto.webhook.method"] === "verify" && !s.attributes[ATTR_ERROR_TYPE]);
    equal(verified.at(-1)?.attributes["docauto.webhook.dedupe"], "already_processed", "verify's dedupe decision");
  });

  await t.test("a session that reconnects shows its reconnects, its pause and its close in its span", async () => {
    ScriptedSocket.made = [];
    const transcriber = new realtime.RealtimeTranscriber({
      url: `wss://realtime.example.com/v1/realtime/socket?ticket=${SECRETS.ticket}`,
      getUrl: () => `wss://realtime.example.com/v1/realtime/socket?ticket=${SECRETS.ticket}2`,
      WebSocket: ScriptedSocket,
      reconnectDelayMs: 20,
      frameMs: 20,
    });
    const opens = [];
    const reopened = new Promise((resolve) =>
      transcriber.addEventListener("open", (e) => {
        opens.push(e.detail.reconnected);
        if (e.detail.reconnected) resolve();
      }),
    );
    await transcriber.start({ microphone: false });
    await reopened;
    transcriber.sendAudio(new Int16Array(8000), 16000);
    transcriber.pause();
    transcriber.resume();
    await transcriber.stop();
    equal(opens.join(), "false,true", "opened, dropped, opened again");
    equal(ScriptedSocket.made.length, 2, "two sockets");
    const [session] = named("docauto.realtime.session");
    assert(session, `a span named docauto.realtime.session (${shown(finished())})`);
    const events = session.events.map((e) => e.name);
    equal(
      events.join(),
      "docauto.realtime.open,docauto.realtime.reconnecting,docauto.realtime.open,docauto.realtime.paused,docauto.realtime.resumed",
      "the session's events in order",
    );
    const reconnecting = session.events[1].attributes;
    equal(reconnecting["docauto.realtime.attempt"], 1, "the attempt");
    equal(reconnecting[ATTR_ERROR_TYPE], "socket_closed", "why it dropped");
    equal(session.events[2].attributes["docauto.realtime.reconnected"], true, "the second open is a reconnect");
    equal(session.attributes["docauto.realtime.reconnects"], 1, "reconnects");
    equal(session.attributes["docauto.realtime.close.code"], 1000, "close code");
    equal(session.attributes["docauto.realtime.close.reason"], "done", "close reason");
    equal(session.attributes["docauto.realtime.audio.sent_s"], 0.5, "audio sent");
    equal(session.status.code, SpanStatusCode.UNSET, "a normal close is no error");
    const points = await sdk.points();
    const sum = (name) => points.filter((p) => p.name === name).reduce((n, p) => n + p.value, 0);
    equal(sum("docauto.realtime.sessions"), 1, "sessions opened");
    equal(sum("docauto.realtime.reconnects"), 1, "reconnects");
    equal(sum("docauto.realtime.audio.sent"), 0.5, "audio seconds sent");
  });

  await t.test("no span, event, attribute, metric point or log line holds the key, a ticket, a token, a query or a body", async () => {
    const everything = JSON.stringify({
      spans: finished().map((s) => ({
        name: s.name,
        attributes: s.attributes,
        events: s.events,
        status: s.status,
        links: s.links,
        resource: s.resource?.attributes,
      })),
      points: await sdk.points(),
      logLines,
    });
    const planted = { ...SECRETS, signature: delivery.signature, signaturePart: delivery.signature.split(".")[2], ticketQuery: "ticket=" };
    for (const [what, value] of Object.entries(planted)) assert(!everything.includes(value), `${what} (${value}) found in the telemetry`);
    assert(finished().length >= 12, `the scan saw the spans (${finished().length})`);
  });

  await sdk.shutdown();
  return { passed: t.passed, failed: t.failed };
}

/**
 * A WebSocket scripted as the service: it opens and sends the service's `open`; the first socket is dropped with
 * 1011 soon after (the client reconnects through `getUrl`); a `stop` message is answered with a close 1000 "done".
 */
class ScriptedSocket {
  static made = [];

  constructor(url) {
    this.url = url;
    this.binaryType = "blob";
    this.readyState = 0;
    ScriptedSocket.made.push(this);
    const n = ScriptedSocket.made.length;
    setTimeout(() => {
      this.readyState = 1;
      this.onopen?.({});
      this.onmessage?.({ data: JSON.stringify({ type: "open", sessionId: `rts_${n}`, sampleRate: 16000 }) });
      if (n === 1) setTimeout(() => this.closed(1011, "restart"), 20);
    }, 5);
  }

  send(data) {
    if (typeof data === "string" && JSON.parse(data).type === "stop") setTimeout(() => this.closed(1000, "done"), 5);
  }

  close() {
    this.readyState = 3;
  }

  closed(code, reason) {
    if (this.readyState === 3) return;
    this.readyState = 3;
    this.onclose?.({ code, reason });
  }
}

/** A fenced dedupe store in memory, shared by two verifiers (two instances of a service). */
function fencedStore() {
  const claims = new Map();
  const processed = new Set();
  return {
    claim(id, ttl, token) {
      if (processed.has(id)) return "processed";
      const held = claims.get(id);
      if (held && held.until > Date.now()) return "claimed";
      claims.set(id, { token, until: Date.now() + ttl * 1000 });
      return "won";
    },
    renew(id, ttl, token) {
      const held = claims.get(id);
      if (!held || held.token !== token || held.until <= Date.now()) return false;
      held.until = Date.now() + ttl * 1000;
      return true;
    },
    release(id, token) {
      if (claims.get(id)?.token === token) claims.delete(id);
    },
    add(id) {
      claims.delete(id);
      processed.add(id);
    },
  };
}
