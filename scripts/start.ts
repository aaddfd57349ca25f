/**
 * `npm start`: the local stack - an engine server on 127.0.0.1:8001 and `wrangler dev` on 127.0.0.1:8787 in
 * front of it. Ctrl-C stops everything (each child runs in its own process group, so workerd goes too).
 */
import { type ManagedProcess, startManaged, startWranglerDev, waitForHttp } from "./stack";

const WORKER_PORT = 8787;
const ENGINE_PORTS = [8001];

const processes: ManagedProcess[] = [];
let stopping = false;

async function stopAll(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    console.log("\nstopping the local stack...");
    await Promise.all(processes.map((p) => p.stop()));
  }
  process.exit(code);
}

process.on("SIGINT", () => void stopAll(0));
process.on("SIGTERM", () => void stopAll(0));

for (const port of ENGINE_PORTS) {
  processes.push(
    startManaged(`engine:${port}`, "node_modules/.bin/tsx", ["src/engine/main.ts", "--port", String(port)]),
  );
}
const worker = startWranglerDev({ port: WORKER_PORT });
processes.push(worker);
for (const p of processes) {
  p.child.once("exit", (code) => {
    if (!stopping) {
      console.error(`${p.name} exited (code ${code}); stopping the stack`);
      void stopAll(1);
    }
  });
}

try {
  await Promise.all([
    ...ENGINE_PORTS.map((port) => waitForHttp(`http://127.0.0.1:${port}/health`)),
    waitForHttp(`http://127.0.0.1:${WORKER_PORT}/health`, 60_000),
  ]);
} catch (error) {
  console.error(String(error));
  await stopAll(1);
}
console.log(`
spillway is up: Worker on http://127.0.0.1:${WORKER_PORT}, engine servers on ${ENGINE_PORTS.map((p) => `127.0.0.1:${p}`).join(", ")}
send a request:
  curl -s http://127.0.0.1:${WORKER_PORT}/v1/chat/completions -H 'content-type: application/json' \\
    -d '{"model":"demo-model","messages":[{"role":"user","content":"hello"}]}'
Ctrl-C stops everything.
`);
