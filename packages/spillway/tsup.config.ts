import { defineConfig } from "tsup";

// The Worker package: the middleware and the router Durable Object, built from the repository's src/edge (the
// one source of truth; the repository's own Worker runs the same files). `cloudflare:*` modules are the
// runtime's; hono is the user's (a peer), zod a dependency.
export default defineConfig({
  // `config`: the parser alone, for Node too (a CI check of SPILLWAY_CONFIG), without the Durable Objects.
  entry: { index: "../../src/edge/index.ts", config: "../../src/edge/config-entry.ts" },
  outDir: "dist",
  format: ["esm"],
  platform: "neutral",
  target: "es2022",
  dts: true,
  clean: false,
  sourcemap: false,
  treeshake: true,
  external: [/^cloudflare:/, "hono", /^hono\//, "zod"],
  tsconfig: "tsconfig.json",
});
