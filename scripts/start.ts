/**
 * `npm start`: the full local demo on one machine - three engine servers of different speeds (simulated GPUs,
 * `--speed 1`, `2` and `4`) on 127.0.0.1:8001-8003, `wrangler dev` on 127.0.0.1:8787 in front of them with the
 * sample configuration from wrangler.toml, and the live dashboard at /spillway/dashboard.
 * `npm start -- --traffic` also runs the traffic generator (scripts/demo-traffic.ts), which ramps load past
 * the fleet's capacity and back.
 *
 * Ctrl-C stops everything: each child runs in its own process group and the whole group is signalled, so no
 * workerd or engine process is left behind. So does a closed terminal (SIGHUP) or a killed parent (npm, tsx: this
 * process, or the sh between npm and tsx, is reparented). Killed itself with SIGKILL, it cannot stop anyone: each
 * child group has a guard that watches this process and kills the group when it is gone. Ports already taken (a
 * second `npm start`) are reported in one line before anything starts. An engine that dies once the demo is up is
 * reported and the demo goes on with the others (the Worker routes around it); the Worker or the last engine
 * exiting stops it.
 *
 * Flags (for tests and busy machines): `--port` (8787), `--engine-ports 8001,8002,8003` (other ports than the
 * sample's are passed to wrangler as SPILLWAY_CONFIG), `--persist-to DIR`.
 */
import { existsSync, readFileSync } from "node:fs";
import { type ManagedProcess, startManaged, startWranglerDev, takenPorts, waitForWorker } from "../src/bench/stack";
import { commandFlags, numberFlag } from "./command-line";
import { formatTick, runTraffic } from "./demo-traffic";
import { watchJobParents } from "./job-parents";

/** The demo's admin token, for local use only (it guards nothing anyone else can reach on 127.0.0.1). */
const DEMO_TOKEN = "demo-token";
const SPEEDS = [1, 2, 4];

const PORT = { min: 1, max: 65535, integer: true };
const { values, workerPort, enginePorts } = commandFlags(
  "npm start -- [--traffic] [--port <n>] [--engine-ports <n,n,n>] [--persist-to <dir>]",
  {
    options: {
      traffic: { type: "boolean", default: false },
      port: { type: "string", default: "8787" },
      "engine-ports": { type: "string", default: "8001,8002,8003" },
      "persist-to": { type: "string" },
    },
  },
  ({ values }) => ({
    values,
    workerPort: numberFlag("port", values.port, 8787, PORT),
    enginePorts: values["engine-ports"].split(",").map((p) => numberFlag("engine-ports", p, 8001, PORT)),
  }),
);

/** The sample configuration: wrangler.toml's SPILLWAY_CONFIG line. */
function sampleConfig(): { deployments: Record<string, { replicas: string[] }> } {
  const sample = /^SPILLWAY_CONFIG = '(.*)'$/m.exec(readFileSync("wrangler.toml", "utf8"))?.[1];
  if (!sample) throw new Error("wrangler.toml has no SPILLWAY_CONFIG line");
  return JSON.parse(sample) as { deployments: Record<string, { replicas: string[] }> };
}

/** The sample configuration with the replicas moved to `ports` (undefined: the sample's own ports). */
function configFor(ports: number[]): string | undefined {
  if (ports.join(",") === "8001,8002,8003") return undefined;
  const config = sampleConfig();
  for (const d of Object.values(config.deployments)) d.replicas = ports.map((p) => `http://127.0.0.1:${p}`);
  return JSON.stringify(config);
}

// wrangler loads .dev.vars (gitignored) by itself; without one, the demo token is passed on the command line.
const devVars = existsSync(".dev.vars") ? readFileSync(".dev.vars", "utf8") : "";
const ownToken = /^SPILLWAY_ADMIN_TOKEN\s*=/m.test(devVars);
const vars: Record<string, string> = ownToken ? {} : { SPILLWAY_ADMIN_TOKEN: DEMO_TOKEN };
const config = configFor(enginePorts);
if (config) vars.SPILLWAY_CONFIG = config;
// Every engine is a replica of every deployment of the sample: with a signing secret (SPILLWAY_SIGNING_SECRET in
// .dev.vars and in this environment) they refuse requests the edge signed for any other. A SPILLWAY_CONFIG of
// .dev.vars that the command line does not replace may name other deployments: then the engines accept any.
const ownConfig = config === undefined && /^SPILLWAY_CONFIG\s*=/m.test(devVars);
const deployments = ownConfig ? [] : Object.keys(sampleConfig().deployments);

const taken = await takenPorts([...enginePorts, workerPort]);
if (taken.length > 0) {
  console.error(
    `npm start: port${taken.length > 1 ? "s" : ""} ${taken.join(", ")} already in use on 127.0.0.1 (another demo running?); stop it or pass --port / --engine-ports`,
  );
  process.exit(1);
}

const processes: ManagedProcess[] = [];
const traffic = new AbortController();
let trafficDone: Promise<void> = Promise.resolve();
let stopping = false;

async function stopAll(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    console.log("\nstopping the demo...");
    traffic.abort();
    await trafficDone;
    // The Worker first: engines then see their clients leave and finish at once instead of being cut off.
    await worker.stop();
    await Promise.all(processes.map((p) => p.stop()));
  }
  process.exit(code);
}

process.on("SIGINT", () => void stopAll(0));
process.on("SIGTERM", () => void stopAll(0));
process.on("SIGHUP", () => void stopAll(0)); // the terminal closed
// npm or tsx killed: this process or one above it in its job is reparented; nobody is left to press Ctrl-C.
watchJobParents(() => void stopAll(1));

/** The command that starts an engine again by hand, as the demo started it (its console shows it on the engine's exit). */
const restartCommand = new Map<ManagedProcess, string>();
/** Each engine's port, to wait for that engine's own answer there. */
const portOfEngine = new Map<ManagedProcess, number>();
enginePorts.forEach((port, i) => {
  const speed = SPEEDS[i % SPEEDS.length] ?? 1;
  const deploymentArgs = deployments.length > 0 ? ["--deployment", deployments.join(",")] : [];
  const engine = startManaged(`engine:${port}`, "node_modules/.bin/tsx", [
    "src/engine/main.ts",
    "--port",
    String(port),
    "--speed",
    String(speed),
    "--name",
    `engine-${port}-x${speed}`,
    // Keep the console readable under load: warnings only, no access lines.
    "--log-level",
    "warning",
    "--disable-access-log",
    ...deploymentArgs,
  ]);
  processes.push(engine);
  portOfEngine.set(engine, port);
  restartCommand.set(engine, ["npm run engine --", "--port", port, "--speed", speed, ...deploymentArgs].join(" "));
});
const worker = startWranglerDev({ port: workerPort, vars, persistTo: values["persist-to"] });
processes.push(worker);
/** Set once every piece answered its health check: from then on an engine's exit is a failure to watch, not to stop for. */
let up = false;
const liveEngines = new Set(processes.filter((p) => p !== worker));
for (const p of processes) {
  p.child.once("exit", (code, signal) => {
    if (stopping) return;
    // A child killed by a signal (its whole group SIGKILLed, as by an OOM kill of the group) has no exit code.
    const how = code === null ? `signal ${signal}` : `code ${code}`;
    liveEngines.delete(p);
    // Before the demo is up, or the Worker itself: nothing to show. The last engine: nothing left to serve.
    if (!up || p === worker || liveEngines.size === 0) {
      console.error(`${p.name} exited (${how}); stopping the demo`);
      void stopAll(1);
      return;
    }
    // A replica lost under the Worker is what spillway is for: the router marks it down and routes around it, and
    // takes it back once a probe reads it again (an engine started anew on its port).
    console.error(
      `${p.name} exited (${how}); the demo goes on with ${liveEngines.size} engine(s): the Worker routes around it. ` +
        `To bring it back: ${restartCommand.get(p) ?? "npm run engine"}`,
    );
  });
}

try {
  await Promise.all([
    // Each answer must come from the process started for its port: the ports were free a moment ago, but another
    // server may have taken one since, and its answers would pass for the demo's.
    ...[...portOfEngine].map(([engine, port]) => waitForWorker(engine, `http://127.0.0.1:${port}/health`, 30_000)),
    waitForWorker(worker, `http://127.0.0.1:${workerPort}/health`, 60_000),
  ]);
} catch (error) {
  console.error(String(error));
  await stopAll(1);
}
up = true;
const base = `http://127.0.0.1:${workerPort}`;
const dashboard = ownToken
  ? `${base}/spillway/dashboard   (token: SPILLWAY_ADMIN_TOKEN from your .dev.vars)`
  : `${base}/spillway/dashboard#token=${DEMO_TOKEN}   (demo token, local use only)`;
console.log(`
spillway demo is up
  Worker     ${base}  (wrangler dev, deployment demo-model)
  engines    ${enginePorts.map((p, i) => `127.0.0.1:${p} (speed ${SPEEDS[i % SPEEDS.length]})`).join(", ")}
  dashboard  ${dashboard}
send a request:
  curl -s ${base}/v1/chat/completions -H 'content-type: application/json' \\
    -d '{"model":"demo-model","messages":[{"role":"user","content":"hello"}]}'
${values.traffic ? "traffic: ramping past capacity and back (shed requests show Retry-After)" : "load it: npm run demo:traffic   (or restart with: npm start -- --traffic)"}
Ctrl-C stops everything.
`);
if (values.traffic) {
  trafficDone = runTraffic({ baseUrl: base, signal: traffic.signal, onTick: (t) => console.log(formatTick(t)) });
}
