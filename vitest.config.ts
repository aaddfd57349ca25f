import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { edgeTestConfig, TEST_ADMIN_TOKEN, TEST_SIGNING_SECRET } from "./test/support/edge-test-config.ts";

// Keep miniflare offline and quiet inside the Workers pool (see README, "Development").
process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
process.env.WRANGLER_SEND_METRICS ??= "false";
process.env.WRANGLER_SEND_ERROR_REPORTS ??= "false";
process.env.WRANGLER_HIDE_BANNER ??= "true";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "node",
          environment: "node",
          include: ["test/node/**/*.test.ts"],
          testTimeout: 30_000,
        },
      },
      {
        plugins: [
          cloudflareTest(({ inject }) => ({
            main: "./src/edge/worker.ts",
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: {
                SPILLWAY_CONFIG: JSON.stringify(edgeTestConfig(inject("fakeEngineUrl"))),
                SPILLWAY_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
                SPILLWAY_SIGNING_SECRET: TEST_SIGNING_SECRET,
              },
            },
          })),
        ],
        test: {
          name: "edge",
          include: ["test/edge/**/*.test.ts"],
          globalSetup: ["./test/support/edge-global-setup.ts"],
          testTimeout: 30_000,
        },
      },
    ],
  },
});
