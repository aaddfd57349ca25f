import { env } from "cloudflare:workers";
import { Hono } from "hono";
import { describe, expect, it, vi } from "vitest";
import readme from "../../README.md?raw";
import { CONFIG_INVALID } from "../../src/edge/config-invalid";
import { type SpillwayOptions, type SpillwayVariables, spillway } from "../../src/edge/index";
import { expectConfigInvalid, stats0 } from "./helpers";

type Bindings = typeof env;

/** A user's Worker: the middleware with `options`, and a handler after it that reads `c.get("spillway")`. */
function userApp(options: SpillwayOptions) {
  const app = new Hono<{ Bindings: Bindings; Variables: SpillwayVariables }>();
  const seen: unknown[] = [];
  app.use("/v1/*", async (c, next) => {
    await next();
    seen.push(c.get("spillway"));
  });
  app.post("/v1/chat/completions", spillway(options));
  app.get("/v1/chat/completions", spillway(options), (c) => c.text("GET passes through"));
  const ctx = { waitUntil: () => {}, passThroughOnException: () => {}, props: {} } as unknown as ExecutionContext;
  const send = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    app.fetch(
      new Request("http://user.example/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ messages: [{ role: "user", content: "hi" }], ...body }),
      }),
      env,
      ctx,
    );
  return { app, send, seen, ctx };
}

describe("spillway() options, in a user's Hono app", () => {
  it("defaults: the body's model is the deployment, c.get('spillway') tells later middleware the outcome", async () => {
    const { send, seen } = userApp({});
    const res = await send({ model: "misc" });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(seen).toEqual([
      { deployment: "misc", shard: 0, outcome: "admitted", tenant: "anonymous", priority: "interactive" },
    ]);
  });

  it("a GET goes to the next handler untouched", async () => {
    const { app, ctx } = userApp({});
    const res = await app.fetch(new Request("http://user.example/v1/chat/completions"), env, ctx);
    expect(await res.text()).toBe("GET passes through");
  });

  it("deploymentOf maps a request to its deployment", async () => {
    const { send, seen } = userApp({ deploymentOf: (c) => c.req.header("x-tenant-deployment") ?? "none" });
    const res = await send({ model: "gpt-4o" }, { "x-tenant-deployment": "misc" });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(seen).toMatchObject([{ deployment: "misc", outcome: "admitted" }]);
    expect((await send({ model: "misc" })).status).toBe(404);
  });

  it("routers supplies the Durable Object namespace", async () => {
    let asked = 0;
    const { send } = userApp({
      routers: (c) => {
        asked += 1;
        return c.env.DEPLOYMENT_ROUTER;
      },
    });
    const res = await send({ model: "misc" });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(asked).toBe(1);
  });

  it("a deployment's locationHint goes with every router lookup", async () => {
    const hints: { name: string; options: unknown }[] = [];
    const { send } = userApp({
      routers: (c) =>
        ({
          getByName: (name: string, options?: unknown) => {
            hints.push({ name, options });
            return c.env.DEPLOYMENT_ROUTER.getByName(name, options as { locationHint: "weur" } | undefined);
          },
        }) as unknown as typeof c.env.DEPLOYMENT_ROUTER,
    });
    for (const model of ["hinted", "misc"]) {
      const res = await send({ model });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    // Acquire and release each look the router up (a fresh stub per call): every lookup carries the hint.
    const hintsOf = (prefix: string) => hints.filter((h) => h.name.startsWith(prefix)).map((h) => h.options);
    expect(hintsOf("hinted#").length).toBeGreaterThan(0);
    expect(hintsOf("hinted#")).toEqual(hintsOf("hinted#").map(() => ({ locationHint: "weur" })));
    expect(hintsOf("misc#").length).toBeGreaterThan(0);
    expect(hintsOf("misc#")).toEqual(hintsOf("misc#").map(() => undefined));
  });

  it("connectAttempts: 1 answers 502 at the first replica that cannot be reached", async () => {
    const { send } = userApp({ connectAttempts: 1 });
    const res = await send({ model: "dead-only" });
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("bad_gateway");
  });

  it("refuses a connectAttempts that is not a whole number of at least 1, naming it", () => {
    // Clamped before: 0, -1 and NaN ran one attempt, 2.5 three, Infinity as many as the router gave replicas.
    for (const bad of [0, -1, 2.5, Number.NaN, Number.POSITIVE_INFINITY, "3" as unknown as number])
      expect(() => spillway({ connectAttempts: bad })).toThrow(
        /^spillway\(\): connectAttempts must be a whole number of at least 1, got /,
      );
    expect(() => spillway({ connectAttempts: 0 })).toThrow(/got 0$/);
    for (const good of [1, 2, 5]) expect(() => spillway({ connectAttempts: good })).not.toThrow();
  });

  it("answers a request under an invalid SPILLWAY_CONFIG with OpenAI's 500 config_invalid and logs why", async () => {
    // Before, the ConfigError escaped to Hono: a user's Worker answered a plain-text "Internal Server Error".
    const { app, ctx } = userApp({});
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      for (const [config, why] of [
        ["{oops", /^SPILLWAY_CONFIG is not valid JSON/],
        [
          JSON.stringify({ deployments: { misc: { replicas: [] } } }),
          /^invalid SPILLWAY_CONFIG: deployments\.misc\.replicas/,
        ],
      ] as const) {
        errors.mockClear();
        const res = await app.fetch(
          new Request("http://user.example/v1/chat/completions", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ model: "misc", messages: [{ role: "user", content: "hi" }] }),
          }),
          { ...env, SPILLWAY_CONFIG: config },
          ctx,
        );
        await expectConfigInvalid(res, errors.mock.calls, CONFIG_INVALID, why);
      }
    } finally {
      errors.mockRestore();
    }
  });

  it("answers 500 config_invalid, naming the binding in its log, when the Worker has no DEPLOYMENT_ROUTER", async () => {
    // Before, the missing binding read as an unreachable router: 503 "retry later" and a TypeError in the log.
    const { app, ctx } = userApp({});
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const logs = vi.spyOn(console, "log").mockImplementation(() => {});
    try {
      const res = await app.fetch(
        new Request("http://user.example/v1/chat/completions", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "misc", messages: [{ role: "user", content: "hi" }] }),
        }),
        { ...env, DEPLOYMENT_ROUTER: undefined },
        ctx,
      );
      await expectConfigInvalid(
        res,
        errors.mock.calls,
        "the gateway has no DEPLOYMENT_ROUTER binding (its log says why)",
        /^the Worker has no DEPLOYMENT_ROUTER binding: .*\[\[durable_objects\.bindings\]\]/,
      );
    } finally {
      errors.mockRestore();
      logs.mockRestore();
    }
  });

  it("connectAttempts (default 2) moves an unreachable attempt on to another replica", async () => {
    const { send } = userApp({});
    const dead = "http://127.0.0.1:1/dead";
    // The router picks between the two at random; go on until one request has met the dead replica.
    for (let i = 0; i < 40 && !(await stats0("dead-then-live")).replicas[dead]?.unreachable; i++) {
      const res = await send({ model: "dead-then-live" });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    expect((await stats0("dead-then-live")).replicas[dead]?.unreachable).toBe(true);
  });
});

describe("README's table of spillway(options)", () => {
  it("has a row for every option and no other", () => {
    // Every key of SpillwayOptions and no other, or this does not compile (tsconfig.worker.json).
    const options = {
      deploymentOf: true,
      routers: true,
      connectAttempts: true,
      tenantOf: true,
      quotas: true,
    } satisfies Record<keyof SpillwayOptions, true>;
    const lines = readme.split("\n");
    const start = lines.indexOf("| option | default | meaning |");
    expect(start).toBeGreaterThan(0);
    const end = lines.findIndex((line, i) => i > start && !line.startsWith("|"));
    const documented = lines.slice(start + 2, end).map((row) => /^\| `(\w+)/.exec(row)?.[1]);
    expect(documented.sort()).toEqual(Object.keys(options).sort());
  });
});
