import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { edgeTestConfig, TEST_ADMIN_TOKEN, TEST_SIGNING_SECRET } from "./test/support/edge-test-config.ts";

// Keep miniflare offline and quiet inside the Workers pool (see README, "Development").
process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
process.env.WRANGLER_SEND_METRICS ??= "false";
process.env.WRANGLER_SEND_ERROR_REPORTS ??= "false";
process.env.WRANGLER_HIDE_BANNER ??= "true";

/** Test files that start processes are named `*.process.test.ts` (see the "process" project). */
const PROCESS_SUITES = "test/node/**/*.process.test.ts";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "node",
          environment: "node",
          include: ["test/node/**/*.test.ts"],
          exclude: [PROCESS_SUITES],
          testTimeout: 30_000,
          // Vitest's default is one worker less than the machine's cores: one worker on CI's two, where this
          // project's 210 files spent more time starting forks and importing than testing. Threads start faster,
          // and these suites are pure or start their own servers on loopback, so two at a time is safe.
          pool: "threads",
          maxWorkers: "100%",
          // Vitest groups projects of one order together only when they share maxWorkers: after the workerd tests,
          // whose timing-sensitive suites keep the default of one worker.
          sequence: { groupOrder: 1 },
        },
      },
      {
        // Suites that start processes (wrangler dev, workerd, Chromium, engine servers, the soak): after the
        // other projects (groupOrder 2), one file at a time, so they neither starve nor are starved by the
        // timing-sensitive workerd tests. Each of their hooks and tests states its own worst-case timeout;
        // these are only the ceilings for the rest.
        test: {
          name: "process",
          environment: "node",
          include: [PROCESS_SUITES],
          fileParallelism: false,
          sequence: { groupOrder: 2 },
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        plugins: [
          cloudflareTest(({ inject }) => ({
            main: "./src/edge/worker.ts",
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              // Miniflare sends every outbound fetch through a proxy Worker of its own that strips CF-Connecting-IP.
              // A fetch that fails there (a replica nobody listens on, a body cut short) is that Worker's rejected
              // handler, which workerd logs as "Uncaught (in promise) Error: Network connection lost." although
              // spillway handles the failure (forwardToReplica's `unreachable`, relayBody's `upstreamFailed`).
              // spillway strips cf-* itself and no test reads what the proxy changes: fetch directly.
              stripCfConnectingIp: false,
              bindings: {
                SPILLWAY_CONFIG: JSON.stringify(edgeTestConfig(inject("fakeEngineUrl"))),
                SPILLWAY_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
                SPILLWAY_SIGNING_SECRET: TEST_SIGNING_SECRET,
                // Test seams such as DeploymentRouter.setClockForTesting (never set outside these tests).
                SPILLWAY_TEST_HOOKS: "1",
              },
            },
          })),
        ],
        test: {
          name: "edge",
          sequence: { groupOrder: 0 },
          include: ["test/edge/**/*.test.ts"],
          globalSetup: ["./test/support/edge-global-setup.ts"],
          testTimeout: 30_000,
        },
      },
    ],
  },
});
