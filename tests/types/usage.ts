// Type-checked with `tsc --strict` (tests/types/tsconfig.json) against the built package: every export used with
// its real types, the event union narrowed on `type`. Never executed.
import {
  DedupeObject,
  WebhookVerifier,
  d1Store,
  durableObjectStore,
  postgresStore,
  redisStore,
  type AgentRunEventData,
  type AgentRunStatus,
  type JsonWebKey,
  type JsonWebKeySet,
  type OtherWebhookEventType,
  type VerifiedWebhookEvent,
  type WebhookCheckThenAddStore,
  type WebhookClaimStore,
  type WebhookDedupeStore,
  type WebhookEnvelope,
  type WebhookErrorCode,
  type WebhookEvent,
  type WebhookFencedStore,
  type WebhookHandleOptions,
  type WebhookStore,
  type WebhookVerificationError,
  type WebhookVerifierOptions,
} from "docauto/webhooks";

const key: JsonWebKey = { kty: "EC", crv: "P-256", x: "x", y: "y", kid: "k1", alg: "ES256", use: "sig" };
const jwks: JsonWebKeySet = { keys: [key] };

const seen = new Set<string>();
const legacyStore: WebhookCheckThenAddStore = {
  has: async (id: string) => seen.has(id),
  add: (id: string) => void seen.add(id),
};
const claims = new Map<string, number>();
const claimStore: WebhookClaimStore = {
  claim: (id: string, ttlSeconds: number) => {
    if ((claims.get(id) ?? 0) > Date.now()) return false;
    claims.set(id, Date.now() + ttlSeconds * 1000);
    return true;
  },
  release: async (id: string) => void claims.delete(id),
  add: (id: string, ttlSeconds: number) => void claims.set(id, Date.now() + ttlSeconds * 1000),
};
const store: WebhookDedupeStore = claimStore;
void legacyStore;

const options: WebhookVerifierOptions = {
  baseUrl: "https://api.example",
  clockToleranceSeconds: 5,
  now: () => Math.floor(Date.now() / 1000),
  cacheTtlSeconds: 3600,
  cooldownSeconds: 30,
  timeoutMs: 5000,
  fetch: (input: string, init: RequestInit) => fetch(input, init),
  dedupe: store,
};
const byUrl = new WebhookVerifier(options);
const byKeys = new WebhookVerifier({ jwks, now: 1_790_000_000, dedupe: true });
const byUrlString = new WebhookVerifier({ jwksUrl: "https://api.example/v1/webhooks/jwks.json" });

function isVerificationError(e: unknown): e is WebhookVerificationError {
  return e instanceof Error && e.name === "WebhookVerificationError";
}

function describe(event: WebhookEvent): string {
  switch (event.type) {
    case "agent_run.waiting":
      return `${event.data.waiting.summary}: ${event.data.waiting.approvals + event.data.waiting.tasks}`;
    case "agent_run.approval_requested": {
      const id: string = event.data.approval.id;
      const status: AgentRunStatus = event.data.status;
      return `${id} ${event.data.approval.action} ${status}`;
    }
    case "agent_run.task_ready": {
      const executor: "human" = event.data.task.executor;
      return `${event.data.task.title} ${executor}`;
    }
    case "agent_run.completed":
      return `${event.data.progress.tasks.completed}/${event.data.progress.tasks.total} ${event.data.incomplete ?? false}`;
    case "agent_run.failed":
      return `${event.data.error.code}: ${event.data.error.message}`;
    case "space.expired":
      return `${event.data.spaceId} ${event.data.name} ${event.data.expiresAt}`;
    default: {
      const other: OtherWebhookEventType = event.type;
      const data: Record<string, unknown> = event.data;
      return `${other} ${Object.keys(data).length}`;
    }
  }
}

async function handle(request: Request, raw: Uint8Array, header: string): Promise<Response> {
  try {
    const event: VerifiedWebhookEvent = await byKeys.verify(raw, header);
    if (event.type === "agent_run.approval_requested") {
      const approvalId: string = event.data.approval.id;
      const run: AgentRunEventData = event.data;
      void approvalId;
      void run;
    }
    const dup: boolean | undefined = event.duplicate;
    const inProgress: boolean | undefined = event.inProgress;
    void inProgress;
    if (!dup) await byKeys.markProcessed(event);
    await byKeys.markProcessed(event.eventId);
    await byKeys.releaseClaim(event);
    await byKeys.releaseClaim(event.eventId);
    const fromString: VerifiedWebhookEvent = await byUrl.verify("{}", header);
    const fromBuffer: VerifiedWebhookEvent = await byUrl.verify(raw.buffer as ArrayBuffer, header);
    const fromRequest: VerifiedWebhookEvent = await byUrl.verifyRequest(request);
    const sync: VerifiedWebhookEvent = byKeys.verifySync(raw, header);
    const envelope: WebhookEnvelope<string, unknown> = sync;
    await byUrlString.refreshKeys();
    const exported: JsonWebKeySet = byUrlString.exportKeys();
    const reused = new WebhookVerifier({ jwks: exported });
    reused.free();
    return Response.json({ ok: describe(fromString) + describe(fromBuffer) + describe(fromRequest) + envelope.eventId });
  } catch (e: unknown) {
    if (isVerificationError(e)) {
      const code: WebhookErrorCode = e.code;
      return Response.json({ error: code }, { status: 400 });
    }
    throw e;
  }
}

void handle;

// @ts-expect-error: the body must be a string, Uint8Array or ArrayBuffer
void byKeys.verify(42, "header");
// @ts-expect-error: unknown option names are rejected
void new WebhookVerifier({ jwksUri: "https://x" });
// @ts-expect-error: a narrowed event has no other type's payload
void ((e: WebhookEvent) => e.type === "space.expired" && e.data.approval);

// handle, fenced stores and the shipped adapters.
const viaRedis: WebhookStore = redisStore({ eval: async (script: string, keys: string[], args: string[]) => [script, keys, args] });
const viaPostgres: WebhookStore = postgresStore({
  query: async (text: string, params: unknown[]) => ({ rows: [{ answer: text }], rowCount: params.length }),
  table: "app.webhook_events",
});
const viaD1: WebhookStore = d1Store({ prepare: (query: string) => query, batch: async (statements: unknown[]) => statements });
const namespace = {
  idFromName: (name: string) => name,
  get: (id: never) => ({ fetch: async (input: string, init: { method: string; body: string }) => new Response(`${id}${input}${init.body}`) }),
};
const viaObjects: WebhookStore = durableObjectStore(namespace, { shards: 8 });
export class AppDedupe extends DedupeObject {}
const ownStore: WebhookFencedStore = {
  claim: async (id: string, ttlSeconds: number, token: string) => (id && ttlSeconds && token ? "won" : "claimed"),
  renew: () => true,
  release: () => undefined,
  add: async () => {},
};
const handleOptions: WebhookHandleOptions = {
  onError: (error: unknown, { event, stage }) => console.log(error, event.eventId, stage),
};
const fleet = new WebhookVerifier({ jwks, dedupe: viaRedis, claimTtlSeconds: 30 });
async function route(request: Request): Promise<Response> {
  const a: Response = await fleet.handle(request, async (event: VerifiedWebhookEvent, { signal }: { signal: AbortSignal }) => {
    if (!signal.aborted) console.log(event.eventId);
  }, handleOptions);
  const b: Response = await fleet.handle({ body: new Uint8Array(2), signature: request.headers.get("x-svc-signature") }, () => {});
  const renewed: boolean = await fleet.renewClaim("evt_1");
  await viaPostgres.setup();
  const answer: "won" | "claimed" | "processed" = await viaD1.claim("evt_1", 60, "token");
  const released: boolean = await viaObjects.release("evt_1", "token");
  void new WebhookVerifier({ jwks, dedupe: ownStore });
  return renewed && released && answer === "won" ? a : b;
}
void route;
// @ts-expect-error: handle needs a handler
void fleet.handle(new Request("https://x.example"));
// @ts-expect-error: redisStore needs an eval binding
void redisStore({ prefix: "x" });
