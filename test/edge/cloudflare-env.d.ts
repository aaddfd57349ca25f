import type { Env as SpillwayEnv } from "../../src/edge/env";

// The tests' `env` from "cloudflare:test" / "cloudflare:workers" carries the ready Worker's bindings. This lives
// with the tests, not in src/: a package must not augment its users' global `Cloudflare.Env`.
declare global {
  namespace Cloudflare {
    interface Env extends SpillwayEnv {}
  }
}
