import { afterEach, describe, expect, it, vi } from "vitest";
import type { DeploymentConfig } from "../../../src/edge/config";
import { routerUnavailable } from "../../../src/edge/router-unavailable";

/** The fields `routerUnavailable` reads, as parseConfig leaves them, with `pass` chosen and three replicas. */
function passConfig(): DeploymentConfig {
  return {
    replicas: ["http://a:8000", "http://b:8000", "http://c:8000"].map((url) => ({ url, load: "spillway" })),
    maxOngoingRequests: 10,
    routerUnavailable: "pass",
    backpressure: { statusCode: 429, retryAfterPolicy: "static", jitter: 0.2, retryAfterS: 4.5 },
  } as unknown as DeploymentConfig;
}

let runId = 0;

describe("routerUnavailable (pass): the replica comes from the injected random source", () => {
  afterEach(() => vi.restoreAllMocks());

  it("picks replica floor(u x n) for the draw u it is given, whatever Math.random says", () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    // Math.random points at the last replica: a pick that read it instead of the parameter would land there.
    vi.spyOn(Math, "random").mockReturnValue(0.99);
    const config = passConfig();
    const picked = [0, 0.34, 0.7].map((u) => {
      // A fresh deployment each time: the pass budget is per isolate and deployment.
      const decision = routerUnavailable(config, `pick-${runId++}`, { cause: "overloaded", message: "x" }, () => u);
      if (!("replica" in decision)) throw new Error("expected a pass");
      decision.release(false);
      return decision.replica;
    });
    expect(picked).toEqual(["http://a:8000", "http://b:8000", "http://c:8000"]);
  });
});
