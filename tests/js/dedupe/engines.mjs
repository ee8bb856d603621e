// Real store engines for the dedupe tests: redis-server and PostgreSQL from Debian's packages, each started in a
// temporary directory on a free loopback port and stopped by its own PID afterwards (nothing left running, nothing
// written outside the directory). An Upstash REST stand-in in front of the Redis, as @upstash/redis speaks it.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, existsSync, readdirSync, chownSync } from "node:fs";
import { createServer } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../common.mjs";

/** Resolves once something accepts connections on `port`, or rejects after `ms`. */
async function waitForPort(port, ms, child, name) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
    const up = await new Promise((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => (socket.destroy(), resolve(true)));
      socket.once("error", () => resolve(false));
    });
    if (up) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${name} did not listen on ${port} within ${ms} ms`);
}

function stopChild(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    child.once("exit", () => (clearTimeout(timer), resolve()));
    child.kill("SIGTERM");
  });
}

/** `redis-server` on a free port in a temporary directory, with no persistence. */
export async function startRedis() {
  const dir = mkdtempSync(join(tmpdir(), "docauto-redis-"));
  const port = await freePort();
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
    "--dir", dir, "--daemonize", "no"], { stdio: ["ignore", "ignore", "inherit"] });
  await waitForPort(port, 10_000, child, "redis-server");
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The PostgreSQL binaries of Debian's package (`/usr/lib/postgresql/<major>/bin`). */
function postgresBin() {
  const base = "/usr/lib/postgresql";
  const majors = existsSync(base) ? readdirSync(base).filter((m) => existsSync(join(base, m, "bin", "postgres"))) : [];
  if (majors.length === 0) throw new Error("PostgreSQL is not installed (apt-get install postgresql: cargo xtask install)");
  return join(base, majors.sort((a, b) => Number(b) - Number(a))[0], "bin");
}

/**
 * A PostgreSQL server in a temporary directory on a free port (trust authentication on loopback, user `postgres`).
 * As root, the server runs as the `postgres` user, which owns the directory.
 */
export async function startPostgres() {
  const bin = postgresBin();
  const dir = mkdtempSync(join(tmpdir(), "docauto-pg-"));
  const data = join(dir, "data");
  const port = await freePort();
  const root = process.getuid?.() === 0;
  const asUser = (cmd, args) => (root ? ["runuser", ["-u", "postgres", "--", cmd, ...args]] : [cmd, args]);
  if (root) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    chownSync(dir, uid, gid);
  }
  const [initCmd, initArgs] = asUser(join(bin, "initdb"), ["-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"]);
  execFileSync(initCmd, initArgs, { stdio: ["ignore", "ignore", "inherit"] });
  const [cmd, args] = asUser(join(bin, "postgres"), ["-D", data, "-p", String(port), "-k", dir,
    "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=200"]);
  const child = spawn(cmd, args, { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr.on("data", (d) => (log = (log + d).slice(-4000)));
  try {
    await waitForPort(port, 30_000, child, "postgres");
  } catch (e) {
    throw new Error(`${e.message}\n${log}`);
  }
  return {
    port,
    connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * An Upstash REST stand-in: `POST /` with a JSON command array (or `/pipeline`), `Authorization: Bearer <token>`,
 * answered `{ result }` from the local Redis (through `send(args)`), base64-encoding strings when the client asks for
 * it (`Upstash-Encoding: base64`, @upstash/redis's default).
 */
export async function startUpstashStandIn(send, token) {
  const encode = (v, base64) => {
    if (typeof v === "string") return base64 ? Buffer.from(v).toString("base64") : v;
    if (Array.isArray(v)) return v.map((x) => encode(x, base64));
    return v;
  };
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    if (req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: "Unauthorized" }));
      return;
    }
    const base64 = String(req.headers["upstash-encoding"] ?? "").toLowerCase() === "base64";
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    const one = async (command) => {
      try {
        return { result: encode(await send(command.map(String)), base64) };
      } catch (e) {
        return { error: String(e.message ?? e) };
      }
    };
    const answer = req.url.startsWith("/pipeline") || req.url.startsWith("/multi-exec")
      ? await Promise.all(body.map(one))
      : await one(body);
    const status = !Array.isArray(answer) && answer.error ? 400 : 200;
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(answer));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    stop: () => new Promise((r) => server.close(r)),
  };
}
