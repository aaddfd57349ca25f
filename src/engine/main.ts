import { serve } from "@hono/node-server";
import { createEngineApp } from "./server";

/** `npm run engine -- --port 8001`: starts one engine server on 127.0.0.1. */
function parsePort(argv: string[]): number {
  const i = argv.indexOf("--port");
  const port = i >= 0 ? Number(argv[i + 1]) : 8001;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`--port must be an integer in [0, 65535], got ${argv[i + 1]}`);
  return port;
}

const port = parsePort(process.argv.slice(2));
const server = serve(
  { fetch: createEngineApp({ name: `engine-${port}` }).fetch, hostname: "127.0.0.1", port },
  (info) => {
    console.log(`engine server listening on http://127.0.0.1:${info.port}`);
  },
);
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => server.close(() => process.exit(0)));
