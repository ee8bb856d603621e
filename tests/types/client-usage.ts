// Type-checked with `tsc --strict` (tests/types/tsconfig.json) against the built package: every method of the typed
// client used with its real parameter and result types. Never executed.
import {
  DocAuto,
  validateExtractionSchema,
  APIError,
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  CreditsExhaustedError,
  GoneError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
  type APIPromise,
  type Agent,
  type AgentList,
  type AgentRun,
  type AgentRunStatus,
  type ClientDataOptions,
  type Executor,
  type LogLevel,
  type RunTask,
  type ApprovalDecision,
  type CapabilityRun,
  type ClientOptions,
  type ExtractParams,
  type FileRecord,
  type JsonWebKeySet,
  type Page,
  type PagePromise,
  type RealtimeSession,
  type RequestOptions,
  type RunStatus,
  type SavedConfig,
  type TaskCompletion,
  type WebhookDeliveryList,
  type WebhookEndpoint,
  type WebhookList,
  type WithResponse,
} from "docauto";

const options: ClientOptions = {
  apiKey: "sk_test",
  baseUrl: "https://api.example.com",
  maxRetries: 2,
  timeoutMs: 600_000,
  maxRetryAfterMs: 60_000,
  fetch: (input, init) => fetch(input, init),
  defaultHeaders: { "x-team": "docs" },
  dangerouslyAllowBrowser: false,
  logLevel: "debug",
  logger: { debug: console.debug, info: console.info, warn: console.warn, error: console.error },
};
const client = new DocAuto(options);
const fromEnv = new DocAuto();
const base: string = fromEnv.baseUrl;
const controller = new AbortController();
const perCall: RequestOptions = { idempotencyKey: "k1", timeoutMs: 30_000, maxRetries: 0, signal: controller.signal };

async function agents(): Promise<void> {
  const list: AgentList = await client.agents.list();
  const first: Agent | undefined = list.data[0];
  const agent: Agent = await client.agents.retrieve(first?.id ?? "agt_1", perCall);
  const deps: string[] = agent.tasks.flatMap((t) => t.dependsOn);

  const created: AgentRun = await client.agentRuns.create(
    { agent: agent.id, files: [{ url: "https://files.example/a.pdf", processing: "ocr" }, { id: "file_1" }],
      metadata: { ref: 7 }, webhook: { id: "whe_1" } },
    { wait: 30, idempotencyKey: "run-1" },
  );
  const read: AgentRun = await client.agentRuns.retrieve(created.id, { wait: 60 });
  const settled: AgentRun = await client.agentRuns.waitFor(read.id, { until: "settled", timeoutMs: 300_000 });
  const approvalId: string | undefined = settled.approvals?.[0]?.id;
  const approved: ApprovalDecision = await client.agentRuns.approve(settled.id, approvalId ?? "", {
    note: "ok", params: { to: "a@example.com" }, files: ["file_2"],
  });
  const rejected: ApprovalDecision = await client.agentRuns.reject(settled.id, "apr_2", { note: "no" }, perCall);
  const task: TaskCompletion = await client.agentRuns.completeTask(settled.id, "review", { note: "done", files: [] });
  const finished: AgentRun = await client.agentRuns.waitFor(settled.id, { deadlineMs: 600_000 });
  if (finished.status === "failed") {
    const code: string | undefined = finished.error?.code;
    void code;
  }
  void [deps, approved.run.status, rejected.note, task.summary, await client.agentRuns.approve("agr", "apr")];
}

// The types generated from the Rust types (src/wasm/generated/client.d.ts): known fields keep their types, the
// fields and enum values a later API version may add are open.
function generated(run: AgentRun): void {
  const url: string = run.statusUrl;
  const version: number | undefined = run.agent?.version;
  const later: unknown = run["fieldAddedLater"];
  const task: RunTask | undefined = run.tasks?.[0];
  const summary: string | null | undefined = task?.summary;
  const future: AgentRunStatus = "status_added_later";
  const executor: Executor = "agent";
  const data: ClientDataOptions = { maxRetries: 1, logLevel: "debug", defaultHeaders: { "x-team": "a" } };
  // @ts-expect-error: log levels are a closed set
  const level: LogLevel = "verbose";
  // @ts-expect-error: a known field keeps its type under the open index signature
  const wrong: number = run.statusUrl;
  void [url, version, later, summary, future, executor, data, level, wrong];
}

async function verbs(): Promise<void> {
  const p: ExtractParams = { file: { url: "https://files.example/a.pdf" }, schema: { type: "object" }, citations: true };
  const run: CapabilityRun = await client.extract(p, { wait: 120 });
  const value = run.output?.value;
  const citations = run.output?.documents?.[0]?.citations;
  const batch: CapabilityRun = await client.extractBatch({ action: "act_1", files: [{ id: "file_1" }] });
  const parsed: CapabilityRun = await client.parse({ files: [{ id: "file_1" }], ttl: 3600 });
  const redacted: CapabilityRun = await client.redact({ file: { id: "file_1" }, categories: ["email"] });
  const filled: CapabilityRun = await client.fill({ template: { id: "file_t" }, values: { name: "Ada" } });
  const drafted: CapabilityRun = await client.fill({ template: { id: "file_t" }, files: [{ id: "file_1" }] });
  const signed: CapabilityRun = await client.sign({ file: { id: "file_1" }, signers: [{ name: "A", email: "a@x.io" }] });
  const piped: CapabilityRun = await client.pipeline({ files: [{ id: "file_1" }], steps: [{ parse: {} }, { redact: {} }] });
  validateExtractionSchema({ type: "object", properties: { total: { type: "number" } } });
  void [value, citations, batch, parsed, redacted, filled, drafted, signed.envelopeUrl, piped];
}

async function runs(): Promise<void> {
  const pages: PagePromise<CapabilityRun> = client.runs.list({ limit: 50, status: "processed", metadata: { ref: "7" } });
  for await (const run of pages) {
    const status: RunStatus = run.status;
    void status;
  }
  const page: Page<CapabilityRun> = await client.runs.list();
  const more: boolean = page.hasMore && page.hasNextPage();
  const next: Page<CapabilityRun> | null = await page.nextPage();
  for await (const run of page) void run.id;
  const one: CapabilityRun = await client.runs.retrieve("exr_1", { wait: 10 });
  const waited: CapabilityRun = await client.runs.waitFor(one.id, { until: "settled" });
  const cancelled: CapabilityRun = await client.runs.cancel("exr_1");
  const nothing: void = await client.runs.delete("exr_1");
  await client.runs.keep("exr_1", { spaceId: "spc_1" });
  await client.runs.keep("exr_1", { space: "Invoices" });
  const url: string = await client.runs.outputUrl("exr_1", "out.pdf");
  const bytes: Uint8Array = await client.runs.downloadOutput("exr_1", "out.pdf", perCall);
  void [more, next?.cursor, waited, cancelled, nothing, url, bytes.byteLength];
}

async function rest(): Promise<void> {
  const saved: SavedConfig = await client.configs.create("extract", { name: "Invoices", config: { schema: {} } });
  const catalog: Record<string, unknown> = await client.actions.catalog();
  const legacy: SavedConfig = await client.actions.create({ capability: "redact", name: "PII", config: {} });
  const byUrl: FileRecord = await client.files.create({ url: "https://files.example/a.pdf", name: "a.pdf" });
  const uploaded: FileRecord = await client.files.upload({
    name: "a.pdf", mimeType: "application/pdf", data: new Uint8Array([37, 80, 68, 70]),
  });
  const blob: FileRecord = await client.files.upload({ name: "b.txt", mimeType: "text/plain", data: new Blob(["x"]) });
  const read: FileRecord = await client.files.retrieve(byUrl.id);
  const ready: FileRecord = await client.files.waitUntilReady(read.id, { signal: controller.signal });
  const hook: WebhookEndpoint = await client.webhooks.create({ url: "https://h.example/x", events: ["agent_run.completed"] });
  const hooks: WebhookList = await client.webhooks.list();
  const one: WebhookEndpoint = await client.webhooks.retrieve(hook.id);
  const paused: WebhookEndpoint = await client.webhooks.update(hook.id, { disabled: true });
  const deliveries: WebhookDeliveryList = await client.webhooks.deliveries(hook.id);
  await client.webhooks.delete(hook.id);
  const jwks: JsonWebKeySet = await client.webhooks.jwks();
  const session: RealtimeSession = await client.realtime.createSession({ finalPass: true });
  const address: string = session.url; // always present: no `!` or `?? ""`
  void address.startsWith("wss://");
  void [saved.id, catalog, legacy, uploaded, blob, ready.status, hooks.data, one, paused.disabled, jwks.keys, session.url];
  void deliveries.data[0]?.responseStatus;
}

async function responses(): Promise<void> {
  const promise: APIPromise<AgentList> = client.agents.list();
  const { data, response }: WithResponse<AgentList> = await promise.withResponse();
  const replay: boolean = response.idempotentReplay;
  const requestId: string | null = response.requestId;
  const status: number = response.status;
  const header: string | undefined = response.headers["x-request-id"];
  void [data.data, replay, requestId, status, header];
}

async function errors(): Promise<void> {
  try {
    await client.runs.retrieve("exr_1");
  } catch (e) {
    if (e instanceof NotFoundError) {
      const code: string = e.code;
      const status: number | undefined = e.status;
      const id: string | undefined = e.requestId;
      const unknown: boolean = e.outcomeUnknown;
      void [code, status, id, e.docUrl, e.headers, e.retryable, unknown];
    } else if (e instanceof RateLimitError) {
      const wait: number | undefined = e.retryAfter;
      void wait;
    } else if (e instanceof APITimeoutError || e instanceof APIConnectionError || e instanceof APIUserAbortError) {
      void e.message;
    } else if (
      e instanceof BadRequestError || e instanceof AuthenticationError || e instanceof CreditsExhaustedError ||
      e instanceof PermissionDeniedError || e instanceof ConflictError || e instanceof GoneError ||
      e instanceof UnprocessableEntityError || e instanceof InternalServerError || e instanceof APIError
    ) {
      void e.code;
    }
  }
}

void [base, agents, generated, verbs, runs, rest, responses, errors];
