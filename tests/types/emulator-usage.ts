// Compiled (not run) by `cargo xtask test` under `tsc --strict`: the types of `docauto/emulator` as a test runner's
// setup uses them.
import { createEmulator, startEmulator, type EmulatorOptions, type RunningEmulator } from "docauto/emulator";
import { DocAuto } from "docauto";

const options: EmulatorOptions = {
  keys: ["sk_test_a:org_a", { key: "sk_test_b", org: null }],
  scopeKeys: true,
  rateLimit: 1000,
  allowHttpWebhooks: true,
  timeScale: 0.01,
  control: true,
  agents: [{ id: "agt_x" }, "{\"id\":\"agt_y\"}"],
  dispatchBudget: 1 << 20,
};

export async function inProcess(): Promise<number> {
  const emu = createEmulator({ ...options, baseUrl: "http://emulator.test" });
  const client = new DocAuto({ apiKey: emu.apiKey, baseUrl: emu.url, fetch: emu.fetch });
  const agents = await client.agents.list();
  const copy = createEmulator({ snapshot: emu.snapshot() });
  await copy.close();
  await emu.close();
  return agents.data.length;
}

export async function delivered(): Promise<string> {
  const emu = createEmulator({
    deliver: async (request: Request) => Response.json({ got: request.headers.get("x-svc-signature") !== null }),
  });
  const ws = new emu.WebSocket("wss://emulator.test/v1/realtime/socket?ticket=tkt_x");
  ws.binaryType = "arraybuffer";
  ws.onmessage = (event) => {
    const text: string = event.data;
    void text;
  };
  ws.onclose = (event) => {
    const code: number = event.code;
    void code;
  };
  const state: 0 | 1 | 2 | 3 = ws.readyState;
  void state;
  ws.close(1000);
  await emu.close();
  return emu.url;
}

export async function listening(): Promise<RunningEmulator> {
  const emu = await startEmulator({ port: 0, timeScale: 0.01, deliver: () => new Response(null, { status: 204 }) });
  const url: string = emu.url;
  void url;
  return emu;
}

// @ts-expect-error: an unknown option is a type error (and an invalid_options error at run time)
createEmulator({ rateLimt: 5 });

// @ts-expect-error: deliver takes a Request and returns a Response
createEmulator({ deliver: (n: number) => n });
