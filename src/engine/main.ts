/**
 * `npm run engine -- [flags]`: starts one engine server (see `npm run engine -- --help`).
 */
import { CliError, ENGINE_USAGE, engineHelp } from "./cli";
import { COMMAND_HELP, parseEngineCommand } from "./engine-command";
import { startEngineServer } from "./index";
import { LlamaStartError } from "./llama/errors";
import { deploymentNames } from "./options";
import { createShutdownGate } from "./shutdown";

let command: ReturnType<typeof parseEngineCommand>;
try {
  command = parseEngineCommand(process.argv.slice(2), process.env);
} catch (error) {
  if (!(error instanceof CliError)) throw error;
  console.error(`engine: ${error.message}\nusage: ${ENGINE_USAGE} (see --help)`);
  process.exit(2);
}
if (command === "help") {
  console.log(`${engineHelp()}\n\n${COMMAND_HELP}`);
  process.exit(0);
}
const { options, shutdownGraceS } = command;
const gate = createShutdownGate();

const signingSecrets = [process.env.SPILLWAY_SIGNING_SECRET, process.env.SPILLWAY_SIGNING_SECRET_PREVIOUS].filter(
  (secret): secret is string => Boolean(secret),
);
let server: Awaited<ReturnType<typeof startEngineServer>>;
try {
  server = await startEngineServer({ ...options, signingSecrets, wrapFetch: gate.wrap });
} catch (error) {
  // A bad model file, a missing optional package or an unusable GPU: the message says what to do.
  if (error instanceof LlamaStartError) {
    console.error(`engine: ${error.message}`);
    process.exit(1);
  }
  // The address is taken (another engine still running), not this machine's, or a --host name that does not
  // resolve (getaddrinfo's ENOTFOUND / EAI_AGAIN): one line, not a stack trace.
  const code = (error as NodeJS.ErrnoException).code;
  if (!["EADDRINUSE", "EADDRNOTAVAIL", "EACCES", "ENOTFOUND", "EAI_AGAIN"].includes(code ?? "")) throw error;
  console.error(`engine: cannot listen on ${options.host}:${options.port} (${code})`);
  process.exit(1);
}
if (signingSecrets.length > 0) {
  const deployment = server.options.deployment;
  console.log(
    `engine server: inference requires the edge's signature${deployment === undefined ? "" : ` for deployment ${deploymentNames(deployment).join(", ")}`}`,
  );
}
console.log(
  `engine server listening on ${server.url} (model ${server.options.servedModelName}, engine ${server.options.engine}, max-total-tokens ${server.options.maxTotalTokens}${server.options.engine === "simulated" ? `, speed ${server.options.speed}` : ""})`,
);
let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, () => {
    // A second signal: stop waiting.
    if (stopping) process.exit(1);
    stopping = true;
    console.log(`engine server: ${signal}, finishing ${gate.inFlight} request(s) within ${shutdownGraceS} s`);
    void gate
      .drain(shutdownGraceS * 1000)
      .then(({ drained, inFlight }) => {
        if (!drained) console.log(`engine server: grace period over, aborting ${inFlight} request(s)`);
        return server.close();
      })
      .then(() => process.exit(0));
  });
