import { defineConfig } from "tsup";

// The engine server package, built from the repository's src/engine (and the scheduler and core it uses): the
// `spillway-engine` command and the `startEngineServer` API. Only Node and the engine's own dependencies.
export default defineConfig([
  {
    entry: { index: "../../src/engine/index.ts" },
    outDir: "dist",
    format: ["esm"],
    platform: "node",
    target: "node20",
    dts: true,
    clean: false,
    tsconfig: "tsconfig.json",
  },
  {
    entry: { main: "../../src/engine/main.ts" },
    outDir: "dist",
    format: ["esm"],
    platform: "node",
    target: "node20",
    banner: { js: "#!/usr/bin/env node" },
    tsconfig: "tsconfig.json",
  },
]);
