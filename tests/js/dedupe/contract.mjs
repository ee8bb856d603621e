// The contract every dedupe store keeps (docs/webhooks.md, "Writing your own store"), checked against a real engine: each
// step is atomic on the store's own clock; `claim` wins only over nothing live; `renew` and `release` act only for
// the token's holder (and `renew` only while live); `add` marks processed over any claim. Plain JS: it runs in Node
// (Redis, PostgreSQL) and inside a Worker (D1, Durable Objects).
import { Checks, assert } from "../suite.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Runs the contract against `store` (a WebhookStore); returns `{ passed, failed }`. */
export async function runStoreContract(store, log = console.log, tag = "c") {
  const t = new Checks(log);
  const id = (name) => `evt_${tag}_${name}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;

  await t.run("a claim wins over nothing; a second claim sees it claimed; a mark makes it processed", async () => {
    const e = id("basic");
    assert((await store.claim(e, 5, "a")) === "won", "first claim");
    assert((await store.claim(e, 5, "b")) === "claimed", "second claim");
    assert((await store.claim(e, 5, "a")) === "claimed", "the holder claiming again");
    await store.add(e, 60);
    assert((await store.claim(e, 5, "c")) === "processed", "after add");
  });

  await t.run("renew and release act only for the token's holder", async () => {
    const e = id("fence");
    assert((await store.claim(e, 5, "a")) === "won", "claim");
    assert((await store.renew(e, 5, "b")) === false, "b renews a's claim");
    assert((await store.release(e, "b")) === false, "b releases a's claim");
    assert((await store.claim(e, 5, "c")) === "claimed", "a's claim survived b's release");
    assert((await store.renew(e, 5, "a")) === true, "a renews its own claim");
    assert((await store.release(e, "a")) === true, "a releases its own claim");
    assert((await store.claim(e, 5, "c")) === "won", "after a's release");
  });

  await t.run("a lapsed lease: the holder cannot renew it, another wins, and the stale release leaves the new claim", async () => {
    const e = id("lapse");
    assert((await store.claim(e, 1, "a")) === "won", "claim for 1 s");
    await sleep(1300);
    assert((await store.renew(e, 1, "a")) === false, "renewing after the lapse");
    assert((await store.claim(e, 5, "b")) === "won", "b claims the lapsed event");
    assert((await store.release(e, "a")) === false, "a's stale release");
    assert((await store.claim(e, 5, "c")) === "claimed", "b's claim survived the stale release");
  });

  await t.run("a renewed claim outlives its first ttl", async () => {
    const e = id("renew");
    assert((await store.claim(e, 1, "a")) === "won", "claim for 1 s");
    for (let i = 0; i < 3; i++) {
      await sleep(500);
      assert((await store.renew(e, 1, "a")) === true, `renewal ${i}`);
    }
    assert((await store.claim(e, 1, "b")) === "claimed", "1.5 s after the claim, still held");
  });

  await t.run("a mark stands over another's claim, and neither release nor renew undoes it", async () => {
    const e = id("mark");
    assert((await store.claim(e, 5, "a")) === "won", "claim");
    await store.add(e, 60);
    assert((await store.release(e, "a")) === false, "release after the mark");
    assert((await store.renew(e, 5, "a")) === false, "renew after the mark");
    assert((await store.claim(e, 5, "b")) === "processed", "still processed");
  });

  await t.run("a processed mark lapses after its own ttl", async () => {
    const e = id("marklapse");
    await store.add(e, 1);
    assert((await store.claim(e, 5, "a")) === "processed", "within the mark's ttl");
    await sleep(1300);
    assert((await store.claim(e, 5, "a")) === "won", "after it");
  });

  await t.run("concurrent claims of one id: exactly one wins", async () => {
    for (let round = 0; round < 5; round++) {
      const e = id(`race${round}`);
      const answers = await Promise.all(Array.from({ length: 16 }, (_, k) => store.claim(e, 5, `t${k}`)));
      const won = answers.filter((a) => a === "won").length;
      assert(won === 1, `${won} of 16 won (${answers})`);
      assert(answers.every((a) => a === "won" || a === "claimed"), `answers ${answers}`);
    }
  });

  await t.run("bad arguments reject with invalid_input, never reach the store", async () => {
    for (const [args, what] of [[["", 5, "a"], "empty id"], [[42, 5, "a"], "number id"], [["e", 0, "a"], "ttl 0"],
      [["e", Number.NaN, "a"], "ttl NaN"], [["e", 5, ""], "empty token"], [["e", 5, undefined], "no token"]]) {
      let err;
      try {
        await store.claim(...args);
      } catch (e) {
        err = e;
      }
      assert(err?.code === "invalid_input", `${what}: ${err?.code ?? "no error"}`);
    }
  });
  return { passed: t.passed, failed: t.failed };
}
