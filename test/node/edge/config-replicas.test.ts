import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig, routerOptionsFor } from "../../../src/edge/config";

const one = (deployment: Record<string, unknown>) => parseConfig({ deployments: { d: deployment } }).deployments.d;

describe("replica entries in the configuration", () => {
  it("a URL is spillway's engine; an object names its load source", () => {
    const d = one({
      replicas: [
        "http://10.0.0.1:8000",
        { url: "http://10.0.0.2:8000", load: "vllm", model: "meta-llama/Llama-3.1-8B-Instruct" },
        { url: "http://10.0.0.3:8000", load: "none" },
        { url: "http://10.0.0.4:8000" },
      ],
    });
    expect(d?.replicas).toEqual([
      { url: "http://10.0.0.1:8000", load: "spillway" },
      { url: "http://10.0.0.2:8000", load: "vllm", model: "meta-llama/Llama-3.1-8B-Instruct" },
      { url: "http://10.0.0.3:8000", load: "none" },
      { url: "http://10.0.0.4:8000", load: "spillway" },
    ]);
    const options = routerOptionsFor(d as NonNullable<typeof d>);
    expect(options.replicas).toEqual([
      "http://10.0.0.1:8000",
      "http://10.0.0.2:8000",
      "http://10.0.0.3:8000",
      "http://10.0.0.4:8000",
    ]);
    expect(options.unprobedReplicas).toEqual(["http://10.0.0.3:8000"]);
  });

  it.each([
    ["an unknown load source", { replicas: [{ url: "http://a", load: "triton" }] }, "replicas.0"],
    ["a non-http URL", { replicas: [{ url: "ftp://a", load: "vllm" }] }, "replicas.0"],
    ["an unknown replica field", { replicas: [{ url: "http://a", lode: "vllm" }] }, "replicas.0"],
    ["a URL listed twice", { replicas: ["http://a", { url: "http://a", load: "vllm" }] }, "listed twice"],
    // TGI labels nothing: a replica with a `model` would read as unknown for ever (never placed on).
    ["a model on a TGI replica", { replicas: [{ url: "http://a", load: "tgi", model: "m" }] }, "replicas.0.model"],
    ["a model on spillway's engine", { replicas: [{ url: "http://a", model: "m" }] }, "only `vllm` and `sglang`"],
    ["a secret name that is not a binding name", { replicas: ["http://a"], upstreamApiKeySecret: "my key" }, "binding"],
    // Its value would go to every replica as a bearer key (before: accepted, the admin token sent upstream).
    [
      "spillway's admin token as the upstream secret",
      { replicas: ["http://a"], upstreamApiKeySecret: "SPILLWAY_ADMIN_TOKEN" },
      "spillway's own binding",
    ],
    [
      "spillway's signing secret as the upstream secret",
      { replicas: ["http://a"], upstreamApiKeySecret: "SPILLWAY_SIGNING_SECRET" },
      "spillway's own binding",
    ],
    ["an unknown location hint", { replicas: ["http://a"], locationHint: "mars" }, "locationHint"],
  ])("refuses %s", (_, deployment, mention) => {
    expect(() => one(deployment)).toThrow(ConfigError);
    expect(() => one(deployment)).toThrow(mention);
  });

  // Logs, metrics and the dashboard show a replica's URL with its credentials redacted (`replicaLabel`): two replicas
  // told apart only by them would be one series, one stats key, one dashboard row. Before: both accepted.
  it.each([
    ["two gateway keys", ["http://gw.example/llama?key=sk-one", "http://gw.example/llama?key=sk-two"]],
    ["two users", ["http://alice:pw-a@gpu.example", { url: "http://bob:pw-b@gpu.example", load: "vllm" }]],
    ["a user and none", ["http://gpu.example:8000", "http://user:pw@gpu.example:8000"]],
    ["a trailing slash apart", ["http://gw.example/llama?key=sk-one", "http://gw.example/llama/?key=sk-two"]],
  ])("refuses two replicas shown as one once their credentials are redacted: %s", (_, replicas) => {
    expect(() => one({ replicas })).toThrow(ConfigError);
    expect(() => one({ replicas })).toThrow(/would both show as "http:\/\/[^"]*"/);
    // The message names the redacted form, never a credential (it goes into spillway.config_invalid's line).
    expect(() => one({ replicas })).not.toThrow(/sk-|pw/);
  });

  it("accepts replicas with credentials that are told apart by host, port or path, keeping their real URLs", () => {
    const replicas = ["http://gw.example/a?key=sk-1", "http://gw.example/b?key=sk-2", "http://u:p@gpu.example:8001"];
    const d = one({ replicas });
    expect(d?.replicas.map((r) => r.url)).toEqual(replicas);
    expect(routerOptionsFor(d as NonNullable<typeof d>).replicas).toEqual(replicas);
  });

  it("keeps the upstream secret's name and the location hint", () => {
    const d = one({ replicas: ["http://a"], upstreamApiKeySecret: "VLLM_API_KEY", locationHint: "enam" });
    expect(d?.upstreamApiKeySecret).toBe("VLLM_API_KEY");
    expect(d?.locationHint).toBe("enam");
  });
});
