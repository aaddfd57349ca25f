import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signRequest } from "../../../src/core/request-signature";
import { CliError, parseEngineArgs } from "../../../src/engine/cli";
import { type EdgeSignatureOptions, requireEdgeSignature } from "../../../src/engine/edge-signature";
import { parseEngineCommand } from "../../../src/engine/engine-command";
import { type RunningEngineServer, startEngineServer } from "../../../src/engine/index";
import { createLogger } from "../../../src/engine/log-line";
import { deploymentNames, engineOptionsSchema } from "../../../src/engine/options";

// One secret shared by several deployments (allowed): only the engine's deployment option tells a request
// signed for deployment A from one signed for B.
const SECRET = "shared-secret";
const body = JSON.stringify({ model: "demo-model", prompt: "hi", max_tokens: 2 });

const signedFor = (deployment: string, method = "POST", path = "/v1/completions", payload = body) =>
  signRequest(SECRET, { method, path, body: payload, deployment, timestampMs: Date.now(), nonce: crypto.randomUUID() });

/** A Hono app behind the middleware, with one inference route and `/load`; returns its log lines too. */
function guardedApp(options: Partial<EdgeSignatureOptions> = {}) {
  const lines: string[] = [];
  const app = new Hono();
  app.use(
    requireEdgeSignature({
      secrets: [SECRET],
      windowMs: 30_000,
      protectLoadAndMetrics: true,
      logger: createLogger("debug", (line) => lines.push(line)),
      ...options,
    }),
  );
  app.post("/v1/completions", (c) => c.json({ ok: true }));
  app.get("/load", (c) => c.json({ queueLength: 0 }));
  const post = async (headers: Record<string, string>) =>
    (
      await app.request("/v1/completions", {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body,
      })
    ).status;
  return { app, lines, post };
}

describe("requireEdgeSignature: the deployments an engine serves", () => {
  it("refuses a valid signature made for another deployment with 401, and logs the reason", async () => {
    const { lines, post } = guardedApp({ deployments: ["llama"] });
    const headers = await signedFor("mistral");
    expect(await post(headers)).toBe(401);
    expect(lines.some((l) => l.includes("edge signature deployment") && l.includes('"mistral"'))).toBe(true);
  });

  it("serves a request signed for one of its deployments", async () => {
    const { lines, post } = guardedApp({ deployments: ["llama", "llama-long"] });
    expect(await post(await signedFor("llama"))).toBe(200);
    expect(await post(await signedFor("llama-long"))).toBe(200);
    expect(lines.filter((l) => l.includes("refused"))).toEqual([]);
  });

  it("without the option (or with an empty list), accepts a valid signature of any deployment", async () => {
    for (const deployments of [undefined, []]) {
      const { post } = guardedApp({ deployments });
      expect(await post(await signedFor("llama"))).toBe(200);
      expect(await post(await signedFor("mistral"))).toBe(200);
    }
  });

  it("keeps the signature's own failures first: a forged request for another deployment is 'invalid'", async () => {
    const { lines, post } = guardedApp({ deployments: ["llama"] });
    const headers = await signedFor("mistral");
    expect(await post({ ...headers, "x-spillway-signature": "AAAA" })).toBe(401);
    expect(lines.at(-1)).toContain("edge signature invalid");
  });

  it("lets the edge's probes read /load (they sign for no deployment)", async () => {
    const { app } = guardedApp({ deployments: ["llama"] });
    const headers = await signedFor("", "GET", "/load", "");
    expect((await app.request("/load", { headers })).status).toBe(200);
    expect((await app.request("/load")).status).toBe(401);
  });
});

describe("engine server: --deployment", () => {
  let server: RunningEngineServer;
  let open: RunningEngineServer;
  const lines: string[] = [];

  beforeAll(async () => {
    server = await startEngineServer({
      port: 0,
      speed: 1000,
      deployment: "demo-model",
      signingSecrets: [SECRET],
      log: (line) => lines.push(line),
    });
    open = await startEngineServer({ port: 0, speed: 1000, signingSecrets: [SECRET], log: () => {} });
  });
  afterAll(async () => {
    await server.close();
    await open.close();
  });

  const post = (url: string, headers: Record<string, string>) =>
    fetch(`${url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    });

  it("refuses a request the edge signed for another deployment (a replay from another deployment's path)", async () => {
    const res = await post(server.url, await signedFor("other-model"));
    expect(res.status).toBe(401);
    expect(await res.text()).not.toContain("deployment");
    expect(lines.some((l) => l.includes("edge signature deployment"))).toBe(true);
  });

  it("serves a request signed for its deployment", async () => {
    expect((await post(server.url, await signedFor("demo-model"))).status).toBe(200);
  });

  it("without --deployment, serves a valid signature of any deployment (unchanged)", async () => {
    expect((await post(open.url, await signedFor("demo-model"))).status).toBe(200);
    expect((await post(open.url, await signedFor("other-model"))).status).toBe(200);
  });
});

describe("the deployment option", () => {
  const failure = (argv: string[]) => {
    try {
      parseEngineArgs(argv);
    } catch (error) {
      expect(error).toBeInstanceOf(CliError);
      return (error as Error).message;
    }
    throw new Error("expected a CliError");
  };

  it("is unset by default, and takes one name or several separated by commas", () => {
    expect(engineOptionsSchema.parse({}).deployment).toBeUndefined();
    expect(parseEngineArgs(["--deployment", "llama"])).toMatchObject({ deployment: "llama" });
    const several = parseEngineArgs(["--deployment", "llama, llama-long"]);
    expect(several).toMatchObject({ deployment: "llama, llama-long" });
    expect(deploymentNames("llama, llama-long")).toEqual(["llama", "llama-long"]);
  });

  it("refuses an empty name, naming the flag", () => {
    for (const value of ["", " ", "llama,", ",llama", "llama,,mistral"])
      expect(failure(["--deployment", value])).toMatch(/^--deployment: .*none of them empty/);
    expect(failure(["--deployment"])).toMatch(/--deployment/);
  });

  it("is read from a --config file as `deployment`, and checked there too", () => {
    const files: Record<string, string> = {
      "ok.json": JSON.stringify({ deployment: "llama" }),
      "empty.json": JSON.stringify({ deployment: "" }),
      "typed.json": JSON.stringify({ deployment: ["llama"] }),
    };
    const read = (path: string) => files[path] ?? "";
    expect(parseEngineCommand(["--config", "ok.json"], {}, read)).toMatchObject({ options: { deployment: "llama" } });
    expect(() => parseEngineCommand(["--config", "empty.json"], {}, read)).toThrow(/deployment.*none of them empty/);
    expect(() => parseEngineCommand(["--config", "typed.json"], {}, read)).toThrow(/expected a string/);
  });
});
