// The handler every fleet instance runs (Node processes and Workers alike), its behaviour set by the event's data:
// - `crashFirst`: the first handler of the event to start dies at once (its process SIGKILLs itself; a Worker
//   hangs, and the test stops workerd, fleet-workers.mjs), its claim taken and never released;
// - `failFirst`: the first handler of the event to start throws before doing anything;
// - `ms`: it works that long (`msOn[index]` instead on the instance of that index);
// - `failOn`: the instance of that index throws after working.
// Its side effect is the ledger (scenarios.mjs): `start` when it begins (answering how many handlers of the event
// started so far, this one included), `handled` when it succeeded.
export function makeHandler({ index, ledger, crash }) {
  const tell = (what, event) =>
    fetch(`${ledger}/${what}?id=${encodeURIComponent(event.eventId)}&i=${index}`, { method: "POST" }).then((r) => r.text());
  return async (event) => {
    const d = event.data ?? {};
    const nth = Number(await tell("start", event));
    if (d.crashFirst && nth === 1) await crash();
    if (d.failFirst && nth === 1) throw new Error("planned failure (the event's first handler)");
    const ms = d.msOn?.[index] ?? d.ms;
    if (ms) await new Promise((r) => setTimeout(r, ms));
    if (d.failOn === index) throw new Error("planned failure (failOn)");
    await tell("handled", event);
  };
}
