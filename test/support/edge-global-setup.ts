import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { TestProject } from "vitest/node";
import { createEngineApp } from "../../src/engine/server";

declare module "vitest" {
  export interface ProvidedContext {
    engineUrlA: string;
    engineUrlB: string;
  }
}

/** Starts two real engine servers on 127.0.0.1, port 0, for the Workers tests; stops them after. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const servers = await Promise.all(
    ["engine-a", "engine-b"].map(
      (name) =>
        new Promise<ReturnType<typeof serve>>((resolve) => {
          const server = serve({ fetch: createEngineApp({ name }).fetch, hostname: "127.0.0.1", port: 0 }, () =>
            resolve(server),
          );
        }),
    ),
  );
  const urls = servers.map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`);
  project.provide("engineUrlA", urls[0] as string);
  project.provide("engineUrlB", urls[1] as string);
  return async () => {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  };
}
