// Panel 4: the webhook inspector. Every delivery the backend received (verified or rejected with its code), and a
// box that verifies a pasted signature header and body in the browser with the wasm WebhookVerifier.
import { WebhookVerifier } from "../pkg/webhooks/index.js";
import { api, h, showError, onDelivery } from "./ui.js";

const $ = (id) => document.getElementById(id);

export function inspectorPanel(setCount) {
  const all = [];
  let selected = null;

  const render = () => {
    const ok = all.filter((d) => d.verified).length;
    $("delivery-summary").textContent = all.length
      ? `${all.length} deliver${all.length === 1 ? "y" : "ies"}: ${ok} verified, ${all.length - ok} rejected.`
      : "No delivery yet. Start an agent run or a document run: the service signs each event it sends here.";
    $("deliveries").replaceChildren(...all.slice().reverse().map((d) =>
      h("tr", { class: d.verified ? "ok" : "bad", "data-seq": d.seq, "aria-selected": String(d === selected) },
        h("td", {}, d.verified
          ? h("span", { class: "badge good" }, d.duplicate ? "verified · duplicate" : "verified")
          : h("code", { class: "badge bad", title: d.message ?? "" }, d.code)),
        h("td", {}, h("div", { class: "ev" }, h("code", {}, d.type ?? "?"), h("code", { class: "run muted" }, d.processingId ?? "no run id"))),
        h("td", { class: "small muted time" }, new Date(d.receivedAt).toLocaleTimeString()),
        h("td", {}, h("button", { type: "button", class: "link", onclick: () => pick(d), "aria-label": `Inspect delivery ${d.seq}` }, "Inspect")))));
    setCount(all.length);
  };

  function pick(d) {
    selected = d;
    render();
    let pretty = d.body;
    try {
      pretty = JSON.stringify(JSON.parse(d.body), null, 2);
    } catch {
      // not JSON: shown raw
    }
    $("delivery-detail").replaceChildren(...[
      h("h3", {}, d.verified ? "Verified delivery" : `Rejected: ${d.code}`),
      d.verified ? null : h("p", { class: "small" }, d.message ?? ""),
      h("dl", { class: "params" },
        h("dt", {}, "event"), h("dd", {}, h("code", {}, d.eventId ?? "—")),
        h("dt", {}, "type"), h("dd", {}, h("code", {}, d.type ?? "—")),
        h("dt", {}, "run"), h("dd", {}, h("code", {}, d.processingId ?? "—")),
        h("dt", {}, "status"), h("dd", {}, d.status ?? "—")),
      h("pre", { class: "doc small", tabindex: "0" }, pretty),
      h("button", { type: "button", class: "load", onclick: () => {
        $("header").value = d.header;
        $("body").value = d.body;
        $("out").textContent = "Loaded. Fetch the key set if the box is empty, verify, then change one character of the body and verify again.";
        $("out").className = "out";
        $("header").focus();
      } }, "Load into the verify box")].filter(Boolean));
  }

  onDelivery((d) => {
    all.push(d);
    render();
  });
  render();

  const show = (cls, text) => {
    $("out").className = `out ${cls}`;
    $("out").textContent = text;
  };

  $("fetch-jwks").addEventListener("click", async () => {
    showError($("jwks-error"), null);
    try {
      $("jwks").value = JSON.stringify(await api("api/jwks"), null, 2);
    } catch (e) {
      showError($("jwks-error"), e);
    }
  });

  $("verify").addEventListener("click", async () => {
    let jwks;
    try {
      jwks = JSON.parse($("jwks").value);
    } catch {
      return show("err", "Rejected: invalid_jwks\nThe key set is not JSON: fetch it from the backend or paste /v1/webhooks/jwks.json.");
    }
    try {
      const verifier = new WebhookVerifier({ jwks });
      const event = await verifier.verify($("body").value, $("header").value.trim());
      show("ok", `Valid: ${event.type}\n\n${JSON.stringify(event, null, 2)}`);
    } catch (err) {
      show("err", err.code ? `Rejected: ${err.code}\n${err.message}` : `Error: ${err}`);
    }
  });

  // A sample signed here with WebCrypto, as the API signs: ES256 JWS over the claims, bodySha256 of the body.
  const b64u = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
  const utf8 = (s) => new TextEncoder().encode(s);
  $("sample").addEventListener("click", async () => {
    const keys = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
    const { kty, crv, x, y } = await crypto.subtle.exportKey("jwk", keys.publicKey);
    const kid = `demo-${Math.random().toString(36).slice(2, 8)}`;
    const now = new Date().toISOString();
    const envelope = {
      eventId: `evt_${crypto.randomUUID().slice(0, 8)}`, type: "agent_run.approval_requested", processingId: "agr_demo", occurredAt: now,
      data: { object: "agent_run", id: "agr_demo", status: "waiting", approval: { id: "apr_1", kind: "before", action: "send_email", requestedAt: now } },
    };
    const body = JSON.stringify(envelope, null, 2);
    const iat = Math.floor(Date.now() / 1000);
    const claims = { iss: "svc-process", processingId: envelope.processingId, eventId: envelope.eventId, type: envelope.type,
      bodySha256: b64u(await crypto.subtle.digest("SHA-256", utf8(body))), iat, exp: iat + 300 };
    const input = `${b64u(utf8(JSON.stringify({ alg: "ES256", kid })))}.${b64u(utf8(JSON.stringify(claims)))}`;
    const sig = await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, keys.privateKey, utf8(input));
    $("header").value = `${input}.${b64u(sig)}`;
    $("body").value = body;
    $("jwks").value = JSON.stringify({ keys: [{ kty, crv, x, y, kid, use: "sig", alg: "ES256" }] }, null, 2);
    show("", "Sample signed in this page with a throw-away key (valid 5 minutes). Verify it, then change one character of the body.");
  });
}
