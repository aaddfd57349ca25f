/**
 * Layering rules, checked by `npm run lint:deps` (part of `npm run check` and so of `npm test`).
 * Dependencies point inward: the edge, the engine, the simulator and the benchmarks use the pure core and the
 * scheduler; the core and the scheduler use nothing of theirs (and no platform). See docs/architecture.md.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: "core-and-scheduler-are-pure",
      comment:
        "src/core and src/scheduler are the pure layer (routing math, policies, the router driver, the scheduler): " +
        "they import nothing of the edge, the engine, the simulator, the benchmarks, the scripts or the evaluation.",
      severity: "error",
      from: { path: "^src/(core|scheduler)/" },
      to: { path: "^(src/(edge|engine|sim|bench)/|scripts/|eval/|test/)" },
    },
    {
      name: "core-and-scheduler-use-no-platform",
      comment:
        "No Node built-ins and no Workers runtime modules in the pure layer: clock, randomness and I/O are parameters.",
      severity: "error",
      from: { path: "^src/(core|scheduler)/" },
      to: { dependencyTypes: ["core"] },
    },
    {
      name: "src-never-imports-scripts",
      comment: "Scripts, the evaluation driver and tests use src, never the other way round.",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^(scripts|eval|test)/" },
    },
    {
      name: "sim-takes-router-defaults-from-core",
      comment:
        "The simulator builds router options from the core's schema (src/core/router-schema.ts), not from the " +
        "edge's configuration parser: it must not depend on the Worker.",
      severity: "error",
      from: { path: "^src/sim/" },
      to: { path: "^src/edge/" },
    },
    {
      name: "no-unresolvable",
      comment: "An import that resolves to nothing is a typo or a missing dependency.",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    builtInModules: { add: ["cloudflare:workers", "cloudflare:test"] },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default"],
      extensions: [".ts", ".js", ".mjs", ".cjs", ".json", ".d.ts"],
    },
  },
};
