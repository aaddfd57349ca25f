import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildAndPack } from "../../../scripts/packages";
import { startFakeBackend } from "../../../src/bench/fake-openai-backends";
import { type ManagedProcess, startWorkerOnFreePort } from "../../../src/bench/stack";
import { LLAMA_BESIDE_PACKAGE_INSTALL_COMMAND } from "../../../src/engine/llama/node-llama-cpp";
import { buildTestModel } from "../../../src/engine/llama/test-model";
import { describeLlama } from "../llama/llama-support";

const ROOT = resolve(".");
const UPSTREAM_KEY = "example-vllm-key";
const MAX_ONGOING = 3;
const MAX_QUEUED = 10;

// Both suites install the same tarballs: build and pack once (builds write packages/*/dist, so never twice at once).
let tarballs: ReturnType<typeof buildAndPack> | undefined;
const packDir = mkdtempSync(join(tmpdir(), "spillway-packed-"));
const packed = () => tarballs as ReturnType<typeof buildAndPack>;
// A file-level hook runs before every suite's own.
beforeAll(() => {
  tarballs = buildAndPack(packDir);
}, 300_000);
afterAll(() => rmSync(packDir, { recursive: true, force: true }));

interface Answer {
  status: number;
  header(name: string): string | null;
  json(): unknown;
  /** The body as sent, for a failed assertion's message. */
  text(): string;
}

/**
 * The proof of "drop-in": the packages packed as they would be published, installed from the tarballs into a
 * copy of examples/worker (a user's Worker: its own package.json, wrangler.toml and a few lines of code), run
 * under `wrangler dev` in front of two fake vLLM servers that have no `/load`.
 */
describe("examples/worker, installed from the packed tarballs, under wrangler dev", () => {
  let work = "";
  let app = "";
  let worker: ManagedProcess | undefined;
  let base = "";
  const backends: Awaited<ReturnType<typeof startFakeBackend>>[] = [];

  /**
   * POSTs a chat completion on a connection of its own (no keep-alive: wrangler dev closes idle sockets, and a
   * reused one that it closed would fail a request that never reached the Worker).
   */
  const chat = (content: string) =>
    new Promise<Answer>((resolveAnswer, reject) => {
      const body = JSON.stringify({ model: "llama", messages: [{ role: "user", content }] });
      const req = request(
        `${base}/v1/chat/completions`,
        {
          method: "POST",
          agent: false,
          headers: { "content-type": "application/json", authorization: "Bearer the-clients-own-key" },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () =>
            resolveAnswer({
              status: res.statusCode ?? 0,
              header: (name) => {
                const value = res.headers[name];
                return typeof value === "string" ? value : null;
              },
              json: () => JSON.parse(Buffer.concat(chunks).toString()),
              text: () => Buffer.concat(chunks).toString(),
            }),
          );
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(body);
    });

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "spillway-dropin-"));
    app = join(work, "app");
    cpSync(resolve("examples/worker"), app, { recursive: true, filter: (src) => !/node_modules|\.wrangler/.test(src) });
    // What a user's `npm install spillway hono` gives, from the tarball instead of the registry. wrangler and the
    // Workers types are the repository's own (already installed): nothing is fetched that `npm ci` did not.
    const manifest = JSON.parse(readFileSync(join(app, "package.json"), "utf8"));
    manifest.dependencies.spillway = `file:${packed().spillway}`;
    delete manifest.devDependencies;
    writeFileSync(join(app, "package.json"), JSON.stringify(manifest, null, 2));
    execFileSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts"], {
      cwd: app,
      stdio: "pipe",
    });
    mkdirSync(join(app, "node_modules/.bin"), { recursive: true });
    mkdirSync(join(app, "node_modules/@cloudflare"), { recursive: true });
    symlinkSync(join(ROOT, "node_modules/wrangler/bin/wrangler.js"), join(app, "node_modules/.bin/wrangler"));
    symlinkSync(
      join(ROOT, "node_modules/@cloudflare/workers-types"),
      join(app, "node_modules/@cloudflare/workers-types"),
    );

    for (let i = 0; i < 2; i++) {
      backends.push(
        await startFakeBackend("vllm", { model: "llama", maxRunning: 2, delayMs: 100, apiKey: UPSTREAM_KEY }),
      );
    }
    const config = {
      logRejections: false,
      deployments: {
        llama: {
          replicas: backends.map((b) => ({ url: b.url, load: "vllm" })),
          maxOngoingRequests: MAX_ONGOING,
          maxQueuedRequests: MAX_QUEUED,
          upstreamApiKeySecret: "VLLM_API_KEY",
          // A cold estimator answers with this; a warm one computes the hint.
          backpressure: { retryAfterS: 1 },
        },
      },
    };
    const started = await startWorkerOnFreePort({
      root: app,
      vars: { SPILLWAY_CONFIG: JSON.stringify(config), VLLM_API_KEY: UPSTREAM_KEY },
      persistTo: join(work, "state"),
      quiet: true,
    });
    worker = started.worker;
    base = started.base;
  }, 300_000);

  it("runs the example's own Worker, not the repository's (whose /health answers JSON)", async () => {
    // startWranglerDev once ran wrangler in this repository whatever its `root`: every test below then passed
    // against src/edge/worker.ts, whatever the example and the package held.
    const res = await fetch(`${base}/health`);
    expect(await res.text()).toBe("ok");
  });

  afterAll(async () => {
    await worker?.stop();
    await Promise.all(backends.map((b) => b.close()));
    if (work) rmSync(work, { recursive: true, force: true });
  }, 60_000);

  it("installs nothing but spillway, hono and zod, and type-checks as a user's project", () => {
    const installed = readdirSync(join(app, "node_modules")).filter((n) => !n.startsWith("."));
    expect(installed.sort()).toEqual(["@cloudflare", "hono", "spillway", "zod"]);
    execFileSync(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], {
      cwd: app,
      stdio: "pipe",
    });
  }, 120_000);

  it("checks a configuration in plain Node before a deploy: the example's check-config.mjs, through spillway/config", () => {
    const { SPILLWAY_CONFIG: _unset, ...env } = process.env;
    const check = (...args: string[]) =>
      spawnSync(process.execPath, ["check-config.mjs", ...args], { cwd: app, encoding: "utf8", env });
    // Given nothing to check it says how to use it (before: "SPILLWAY_CONFIG is not valid JSON: Unexpected end of
    // JSON input", status 1, as if an empty configuration had been read).
    const none = check();
    expect(none.status).toBe(2);
    expect(none.stderr).toBe("usage: node check-config.mjs config.json (or SPILLWAY_CONFIG in the environment)\n");
    writeFileSync(
      join(work, "good.json"),
      JSON.stringify({ deployments: { llama: { replicas: ["http://10.0.0.1"] } } }),
    );
    const good = check(join(work, "good.json"));
    expect(good.status, good.stderr).toBe(0);
    expect(good.stdout).toBe("SPILLWAY_CONFIG is valid: 1 deployment(s), llama\n");
    writeFileSync(join(work, "bad.json"), '{"deployments":{"llama":{"replicas":[],"maxOngoingRequests":0}}}');
    const bad = check(join(work, "bad.json"));
    // Every problem (one line, `; ` between them), and a failing status for the CI step.
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain("deployments.llama.replicas");
    expect(bad.stderr).toContain("deployments.llama.maxOngoingRequests");
    // The main entry is the Worker's (its Durable Objects import cloudflare:workers): Node cannot load it.
    const main = spawnSync(process.execPath, ["--input-type=module", "-e", 'import "spillway";'], {
      cwd: app,
      encoding: "utf8",
    });
    expect(main.status).not.toBe(0);
  }, 60_000);

  it("answers the openai client's models.list() and models.retrieve(id) from the configuration, an unknown id with OpenAI's 404", async () => {
    // Before spillwayModels, a Worker built on the package had no /v1/models: both calls failed with Hono's bare 404.
    // The package's routes, not a replica's: the fake vLLM servers serve no /v1/models of their own.
    const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: "the-clients-own-key" });
    const page = await client.models.list();
    const llama = { id: "llama", object: "model", created: 0, owned_by: "spillway" };
    expect(page.object).toBe("list");
    expect(page.data).toEqual([llama]);
    expect(await client.models.retrieve("llama")).toEqual(llama);
    // An id with a slash, as most deployments are named, travels percent-encoded as one segment.
    const missing = await client.models.retrieve("org/no-such-model").then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect((missing as InstanceType<typeof OpenAI.NotFoundError>).error).toEqual({
      message: "The model `org/no-such-model` does not exist",
      type: "invalid_request_error",
      param: "model",
      code: "model_not_found",
    });
  }, 60_000);

  it("serves a request through a vLLM server without /load, with the upstream key in place of the client's", async () => {
    const res = await chat("hello");
    expect(res.status, res.text()).toBe(200);
    expect((res.json() as { backend: string }).backend).toBe("vllm");
    const reached = backends.find((b) => b.backend.state.served > 0);
    expect(reached?.backend.state.lastAuthorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(backends.reduce((n, b) => n + b.backend.state.metricsReads, 0)).toBeGreaterThan(0);
  }, 120_000);

  it("sheds what the replicas and the queue cannot hold: 429, Retry-After, retry-after-ms", async () => {
    // Nothing completes until released: 2 x 3 slots and 10 queue places hold 16; at least 5 of 21 are shed.
    const extra = 5;
    let early = 0;
    const sent = Array.from({ length: 2 * MAX_ONGOING + MAX_QUEUED + extra }, () =>
      chat("hold").then((a) => {
        early += 1;
        return a;
      }),
    );
    const answered = Promise.all(sent);
    // Release only once the refusals are in (every request decided), then until every request has answered:
    // queued requests reach the servers as slots free up. The bound on the wait keeps a failure from hanging.
    for (let i = 0; i < 4000; i++) {
      const done = await Promise.race([answered.then(() => true), new Promise((r) => setTimeout(() => r(false), 50))]);
      if (done) break;
      if (early >= extra || i > 1200) for (const b of backends) await fetch(`${b.url}/__release`, { method: "POST" });
    }
    const answers = await answered;
    const shed = answers.filter((a) => a.status === 429);
    expect(shed.length).toBeGreaterThanOrEqual(extra);
    expect(answers.filter((a) => a.status !== 429 && a.status !== 200)).toEqual([]);
    for (const a of shed) {
      expect(Number(a.header("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(Number(a.header("retry-after-ms"))).toBeGreaterThan(0);
      expect((a.json() as { error: { code: string } }).error.code).toBe("rate_limit_exceeded");
    }
  }, 180_000);

  it("under 300 concurrent requests: never more than maxOngoingRequests per server, the rest 429 with hints, no 5xx", async () => {
    const responses = await Promise.all(Array.from({ length: 300 }, () => chat("busy")));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    const refused = responses.filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    for (const res of refused) {
      expect(Number(res.header("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(Number(res.header("retry-after-ms"))).toBeGreaterThan(0);
    }
    for (const b of backends) expect(b.backend.state.peakInflight).toBeLessThanOrEqual(MAX_ONGOING);
    expect(backends.every((b) => b.backend.state.unauthorized === 0)).toBe(true);
  }, 180_000);
});

/**
 * The engine server as an operator installs it on a GPU host: the packed `spillway-engine` tarball in an empty
 * project (no Worker toolchain), started by its `spillway-engine` command.
 */
describe("the spillway-engine package, installed from its tarball", () => {
  let work = "";
  let host = "";
  let engine: ChildProcess | undefined;

  /** Starts the installed `spillway-engine` command; resolves with its URL once it listens. */
  const startEngine = (args: string[]) =>
    new Promise<string>((resolve, reject) => {
      engine = spawn(join(host, "node_modules/.bin/spillway-engine"), args, {
        cwd: host,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      engine.stdout?.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        const match = /listening on (http:\/\/\S+)/.exec(out);
        if (match) resolve(match[1] as string);
      });
      engine.stderr?.on("data", (chunk: Buffer) => {
        out += chunk.toString();
      });
      engine.on("exit", (code) => reject(new Error(`spillway-engine exited with ${code}: ${out}`)));
    });

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), "spillway-engine-pkg-"));
    host = join(work, "gpu-host");
    execFileSync("mkdir", ["-p", host]);
    writeFileSync(join(host, "package.json"), JSON.stringify({ name: "gpu-host", private: true }));
    execFileSync(
      "npm",
      ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", packed()["spillway-engine"]],
      { cwd: host, stdio: "pipe" },
    );
  }, 300_000);

  afterAll(() => {
    engine?.kill("SIGKILL");
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("brings only the engine's own dependencies", () => {
    const installed = readdirSync(join(host, "node_modules")).filter((n) => !n.startsWith("."));
    expect(installed).not.toContain("wrangler");
    expect(installed).not.toContain("miniflare");
    expect(installed).toContain("spillway-engine");
  });

  it("spillway-engine starts a server that answers /load and a chat completion", async () => {
    const url = await startEngine(["--port", "0", "--speed", "1000"]);
    const load = (await (await fetch(`${url}/load`)).json()) as { queueLength: number };
    expect(load.queueLength).toBe(0);
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "demo-model", max_tokens: 4, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { object: string }).object).toBe("chat.completion");
    engine?.kill("SIGKILL");
  }, 120_000);

  // The package has no engines/llama folder: node-llama-cpp is installed beside it, as its error says.
  it("spillway-engine --engine llama without node-llama-cpp names the command that installs it beside the package", () => {
    writeFileSync(join(work, "tiny.gguf"), buildTestModel());
    const run = spawnSync(
      join(host, "node_modules/.bin/spillway-engine"),
      ["--engine", "llama", "--model-path", join(work, "tiny.gguf"), "--port", "0"],
      { cwd: host, encoding: "utf8", timeout: 60_000 },
    );
    expect(run.status, run.stderr).toBe(1);
    expect(run.stderr).toContain(`Install it with: ${LLAMA_BESIDE_PACKAGE_INSTALL_COMMAND}`);
    // The version it names is the one the repository's engines/llama pins (and the engine's types mirror).
    const pinned = JSON.parse(readFileSync("engines/llama/package.json", "utf8")).dependencies["node-llama-cpp"];
    expect(LLAMA_BESIDE_PACKAGE_INSTALL_COMMAND).toContain(`node-llama-cpp@${pinned}`);
  }, 120_000);

  describeLlama("with node-llama-cpp installed beside it", () => {
    it("spillway-engine --engine llama finds it and serves a completion with the model", async () => {
      // What the install command gives, without a registry: the repository's copy, linked into the host project.
      symlinkSync(resolve("engines/llama/node_modules/node-llama-cpp"), join(host, "node_modules/node-llama-cpp"));
      const url = await startEngine(["--engine", "llama", "--model-path", join(work, "tiny.gguf"), "--port", "0"]);
      const res = await fetch(`${url}/v1/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "demo-model", max_tokens: 4, prompt: "hi" }),
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { usage: { completion_tokens: number } }).usage.completion_tokens).toBe(4);
    }, 120_000);
  });
});
