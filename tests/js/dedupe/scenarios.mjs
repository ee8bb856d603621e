// The fleet scenarios of "each event handled exactly once": the same events delivered to several instances at once,
// with failing, crashing, frozen and slow handlers and a store that refuses writes, as the service delivers (at least
// once, copies at the same moment, retries of a non-2xx). The record of what was handled is a ledger the handlers
// write to as their side effect (an HTTP server of this process), not the store under test.
//
// A fleet is `{ size, ttl, deliver(i, body, signature) -> { status: number | "error", duplicate }, deliverCrashing(i, body, signature,
// eventId) -> { status, crashedAt } (a delivery whose handler crashes; crashedAt: Date.now() when the instance
// died, no later than a third of the ttl after its claim), freeze?(i), thaw?(i), refuseWrites?(on) }`; its instances run
// `verifier.handle(delivery, handler)` with the handler of `handler.mjs`, whose behaviour each event's `data` sets.
import { createServer } from "node:http";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** What a copy may be answered: handled or processed (200), another's live claim (409), the handler threw (500), the
 * store did not answer in time (503: on a loaded machine a store call can take longer than a third of the ttl). */
const ANSWERS = [200, 409, 500, 503];

/**
 * The ledger: `POST /start?id=&i=` when a handler starts (answered with the number of starts of the event so far),
 * `POST /handled?id=&i=` when one succeeded.
 */
export async function startLedger() {
  const started = new Map();
  const handled = new Map();
  const waiters = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url, "http://ledger");
    const id = url.searchParams.get("id");
    const i = Number(url.searchParams.get("i"));
    const map = url.pathname === "/handled" ? handled : started;
    if (!map.has(id)) map.set(id, []);
    map.get(id).push(i);
    for (const w of waiters.splice(0)) w();
    res.writeHead(200, { "content-type": "text/plain" }).end(String(map.get(id).length));
  });
  server.keepAliveTimeout = 1;
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    started: (id) => started.get(id) ?? [],
    handled: (id) => handled.get(id) ?? [],
    /** Resolves once `test()` holds, checked after each ledger write (or rejects after `ms`). */
    async until(test, ms, what) {
      const end = Date.now() + ms;
      while (!test()) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await Promise.race([new Promise((r) => waiters.push(r)), sleep(50)]);
      }
    },
    stop: () => new Promise((r) => server.close(r)),
  };
}

/** Whether a 2xx body is handle()'s answer to an event already processed (`"duplicate": true`), not a handling. */
export function isDuplicate(text) {
  try {
    return JSON.parse(text)?.duplicate === true;
  } catch {
    return false;
  }
}

let serial = 0;
/** A new event of the fleet's run; `data` sets the handler's behaviour (see handler.mjs). */
export function newEvent(tag, data) {
  serial += 1;
  const id = `evt_${tag}_${process.pid}_${Date.now().toString(36)}_${serial}`;
  return {
    eventId: id,
    type: "agent_run.completed",
    processingId: `agr_${serial}`,
    occurredAt: new Date().toISOString(),
    data: { object: "agent_run", id: `agr_${serial}`, status: "completed", ...data },
  };
}

/**
 * Runs the scenarios against `fleet` with `signer` (a TestSigner) and `ledger`; `only` limits them to the names
 * given. Returns `[{ name, ok, detail }]`; `exactlyOnce` is false for a control run expected to handle some event
 * twice (an unfenced store), where a scenario passes when the double handling is seen.
 */
export async function runScenarios({ fleet, signer, ledger, only, log = console.log }) {
  const ttlMs = fleet.ttl * 1000;
  const results = [];
  /** One copy of `event` to instance `i`: `{ status, duplicate }`. */
  const sendCopy = async (i, event) => {
    const { body, signature } = await signer.sign(event);
    return fleet.deliver(i, body, signature);
  };
  const send = async (i, event) => (await sendCopy(i, event)).status;
  /** The service's retries: one copy at a time to a rotating instance until one answers 2xx (or `tries` run out). */
  const redeliver = async (event, first, tries, gapMs) => {
    const statuses = [];
    for (let t = 0; t < tries; t++) {
      const status = await send((first + t) % fleet.size, event);
      statuses.push(status);
      if (status === 200) break;
      await sleep(gapMs);
    }
    return statuses;
  };
  /**
   * Delivers `event` until a handler starts, as the service delivers again after a non-2xx (a copy answered 503
   * when the store did not answer in time, then 409 while the claim that store made anyway is live); resolves to
   * `{ delivery }`, the pending status of the delivery whose handler runs (in an object: an async function returning
   * the promise itself would wait for it).
   */
  const startHandling = async (event, first) => {
    for (let t = 0; t < 8; t++) {
      if (t > 0) await sleep(ttlMs / 2);
      const delivery = send((first + t) % fleet.size, event);
      const started = ledger.until(() => ledger.started(event.eventId).length > 0, 60_000, `${event.eventId} to start`);
      started.catch(() => {}); // a delivery that answers first ends the wait; its timer runs out unobserved
      const which = await Promise.race([started.then(() => "started"), delivery]);
      if (which === "started") return { delivery };
      if (which !== 503 && which !== 409) throw new Error(`${event.eventId}: a delivery answered ${which} before a handler started`);
    }
    throw new Error(`${event.eventId}: no delivery started a handler`);
  };
  const once = (event) => {
    const n = ledger.handled(event.eventId).length;
    if (n !== 1) throw new Error(`${event.eventId} handled ${n} times (by instances ${ledger.handled(event.eventId)})`);
  };
  const scenario = async (name, fn) => {
    if (only && !only.includes(name)) return;
    const t0 = Date.now();
    try {
      await fn();
      results.push({ name, ok: true });
      log(`ok   ${name} (${Date.now() - t0} ms)`);
    } catch (e) {
      results.push({ name, ok: false, detail: e.message });
      log(`FAIL ${name}: ${e.message}`);
    }
  };

  // Phase 1: scenarios that share the fleet without disturbing it.
  await Promise.all([
    scenario("concurrent copies: 8 copies of each of 8 events at once, then the service's redeliveries", async () => {
      const events = Array.from({ length: 8 }, () => newEvent("copies", { ms: 150 }));
      const answers = await Promise.all(events.map((e) =>
        Promise.all(Array.from({ length: fleet.size }, (_, i) => sendCopy(i, e)))));
      await Promise.all(events.map(async (e, k) => {
        // A copy that arrives once the winner has marked the event is answered 200 `duplicate` (on a loaded machine
        // one copy of eight can start that late); two copies answered 200 without it would be two handlings.
        const shown = answers[k].map((a) => `${a.status}${a.duplicate ? " duplicate" : ""}`).join(",");
        if (answers[k].some((a) => !ANSWERS.includes(a.status))) throw new Error(`${e.eventId}: answers ${shown}`);
        if (answers[k].filter((a) => a.status === 200 && !a.duplicate).length > 1) throw new Error(`${e.eventId}: two copies handled it (${shown})`);
        const later = await redeliver(e, k, 12, ttlMs / 2);
        if (later.at(-1) !== 200) throw new Error(`${e.eventId}: redeliveries answered ${later}`);
      }));
      events.forEach(once);
    }),
    scenario("failing winners: the first handler of each event throws (500, claim released); a redelivery handles it", async () => {
      const events = Array.from({ length: 4 }, () => newEvent("fail", { failFirst: true, ms: 50 }));
      await Promise.all(events.map(async (e, k) => {
        const first = await Promise.all(Array.from({ length: fleet.size }, (_, i) => send(i, e)));
        if (first.some((s) => !ANSWERS.includes(s))) throw new Error(`${e.eventId}: answers ${first}`);
        const later = await redeliver(e, k, 12, ttlMs / 2);
        if (later.at(-1) !== 200) throw new Error(`${e.eventId}: redeliveries answered ${later}`);
        if (ledger.started(e.eventId).length < 2) throw new Error(`${e.eventId}: the failed handler was not followed by another`);
      }));
      events.forEach(once);
    }),
    scenario("a claim against a release: copies arrive while the winner fails and releases", async () => {
      const events = Array.from({ length: 4 }, () => newEvent("race", { failFirst: true }));
      await Promise.all(events.map(async (e, k) => {
        await Promise.all(Array.from({ length: fleet.size }, async (_, i) => {
          await sleep(i * 15);
          return send(i, e);
        }));
        const later = await redeliver(e, k, 12, ttlMs / 2);
        if (later.at(-1) !== 200) throw new Error(`${e.eventId}: redeliveries answered ${later}`);
      }));
      events.forEach(once);
    }),
    scenario("a mark against a late duplicate: copies arrive around the moment the winner marks", async () => {
      const events = Array.from({ length: 4 }, () => newEvent("mark", { ms: 100 }));
      await Promise.all(events.map(async (e, k) => {
        const copies = await Promise.all(Array.from({ length: fleet.size }, async (_, i) => {
          await sleep(60 + i * 12);
          return send((i + k) % fleet.size, e);
        }));
        if (copies.some((s) => !ANSWERS.includes(s))) throw new Error(`${e.eventId}: answers ${copies}`);
        const later = await redeliver(e, k, 12, ttlMs / 2);
        if (later.at(-1) !== 200) throw new Error(`${e.eventId}: redeliveries answered ${later}`);
      }));
      events.forEach(once);
    }),
    scenario("a handler slower than twice the claim's ttl keeps its claim (renewed); copies meanwhile get 409", async () => {
      const events = Array.from({ length: 2 }, () => newEvent("slow", { ms: 2.5 * ttlMs }));
      await Promise.all(events.map(async (e, k) => {
        const { delivery: winner } = await startHandling(e, k);
        const during = [];
        for (let t = 0; t < 4; t++) {
          await sleep(ttlMs / 2);
          during.push(await send((k + 1 + t) % fleet.size, e));
        }
        const status = await winner;
        if (status !== 200) throw new Error(`${e.eventId}: the slow handler's delivery answered ${status}`);
        if (during.some((s) => s !== 409 && s !== 503)) throw new Error(`${e.eventId}: copies during the handler answered ${during}`);
        if ((await send((k + 3) % fleet.size, e)) !== 200) throw new Error(`${e.eventId}: a copy after it was not 200`);
      }));
      events.forEach(once);
    }),
  ]);

  // Phase 2: an instance crashes, another is frozen.
  await Promise.all([
    scenario("a crash after the claim: the claim lapses after the ttl and a redelivery is handled", async () => {
      const e = newEvent("crash", { crashFirst: true });
      const victim = fleet.size - 1;
      const { body, signature } = await signer.sign(e);
      const { status: first, crashedAt } = await fleet.deliverCrashing(victim, body, signature, e.eventId);
      if (first === 200) throw new Error("the crashing delivery answered 200");
      const during = await send(0, e);
      if (during !== 409 && Date.now() - crashedAt < ttlMs * 0.5) {
        throw new Error(`a copy while the crashed instance's claim was live answered ${during}, not 409`);
      }
      const later = await redeliver(e, 1, 12, ttlMs / 2);
      if (later.at(-1) !== 200) throw new Error(`redeliveries answered ${later}`);
      if (Date.now() - crashedAt < ttlMs * 0.8) throw new Error("handled again before the crashed claim could lapse");
      once(e);
    }),
    scenario("a stale release after a lapse: a frozen winner's claim lapses, another takes the event, the stale one fails and must not release it", async () => {
      if (!fleet.freeze) throw new Error("this fleet cannot freeze an instance");
      const frozen = 0;
      // The frozen instance works 600 ms then fails; the one that takes the event over works two ttls.
      const e = newEvent("stale", { ms: 600, failOn: frozen, msOn: { 1: 2 * ttlMs } });
      const stale = send(frozen, e);
      await ledger.until(() => ledger.started(e.eventId).length > 0, 10_000, "the first handler to start");
      await sleep(200); // inside its work
      fleet.freeze(frozen);
      await sleep(ttlMs * 1.6);
      const taker = send(1, e); // the claim lapsed: this one wins
      await ledger.until(() => ledger.started(e.eventId).length > 1, 10_000, "the second handler to start");
      fleet.thaw(frozen);
      const staleStatus = await stale;
      // The stale handler failed; the taker still works on the event: a copy now must not win it.
      const copy = await send(2, e);
      const takerStatus = await taker;
      if (staleStatus === 200) throw new Error("the frozen instance's failed handler answered 200");
      if (copy !== 409) throw new Error(`a copy after the stale failure answered ${copy}, not 409 (the taker's claim was deleted)`);
      if (takerStatus !== 200) throw new Error(`the taker answered ${takerStatus}`);
      once(e);
    }),
  ]);

  // Phase 3: the store refuses writes while a handler finishes; its mark is retried, never turned into a release.
  await scenario("the store refuses writes during the mark: the mark is retried, the event is not handled again", async () => {
    if (!fleet.refuseWrites) throw new Error("this fleet's store cannot refuse writes");
    const events = Array.from({ length: 2 }, () => newEvent("refuse", { ms: 600 }));
    const winners = (await Promise.all(events.map((e, k) => startHandling(e, k)))).map((w) => w.delivery);
    await fleet.refuseWrites(true);
    await sleep(1500);
    await fleet.refuseWrites(false);
    const statuses = await Promise.all(winners);
    if (statuses.some((s) => s !== 200)) throw new Error(`the winners answered ${statuses}`);
    await sleep(ttlMs * 1.2); // past the claim: only the mark can keep the copies out now
    const later = await Promise.all(events.map((e, k) => send(k + 2, e)));
    if (later.some((s) => s !== 200)) throw new Error(`copies after the mark answered ${later}`);
    events.forEach(once);
  });
  return results;
}
