// Starts an emulator command (the native binary, or `node pkg/emulator/bin.js`) on a free loopback port.
import { spawn } from "node:child_process";

/**
 * Spawns `cmd args --addr 127.0.0.1:0` and waits for its start line. Resolves to `{ url, ms, stop(signal) }`: `ms`
 * from spawn to the line, `stop` sends `signal` (SIGINT unless given) and resolves to the exit code. Rejects when the
 * command exits before it listens.
 */
export function startCommand(cmd, args) {
  const t0 = performance.now();
  const child = spawn(cmd, [...args, "--addr", "127.0.0.1:0"], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        // Later output is drained, so a full pipe never stalls the command.
        child.stdout.removeAllListeners("data");
        child.stdout.resume();
        resolve({
          url: m[1],
          ms: performance.now() - t0,
          stop: (signal = "SIGINT") => new Promise((r) => (child.once("exit", (c) => r(c)), child.kill(signal))),
        });
      }
    });
    child.once("exit", (c) => reject(new Error(`${cmd} exited with ${c} before listening`)));
  });
}
