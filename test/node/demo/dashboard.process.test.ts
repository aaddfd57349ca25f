import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runTraffic } from "../../../scripts/demo-traffic";
import { type ManagedProcess, startWorkerOnFreePort } from "../../../src/bench/stack";
import { type RunningEngineServer, startEngineServer } from "../../../src/engine/index";
import { describeWith } from "../../support/optional-suite";

// The page-side callbacks below run in Chromium; this is the little of the DOM they use (no DOM lib in Node).
declare const document: {
  body: { dataset: Record<string, string | undefined> };
  getElementById(id: string): { textContent: string | null } | null;
  querySelector(selector: string): { getAttribute(name: string): string | null } | null;
};

const CHROMIUM = "/usr/bin/chromium";
const TOKEN = "dashboard-test-token";
// The screenshot of every run; UPDATE_SCREENSHOTS=1 also refreshes the README's (docs/img/dashboard.png).
const SHOT = "docs/img/dashboard-latest.png";

/** Waits for `step` at most `ms`; past that, says which step did not finish and moves on. */
async function bounded(what: string, step: Promise<unknown> | undefined, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<void>((done) => {
    timer = setTimeout(() => {
      console.error(`teardown: ${what} did not finish within ${ms / 1000} s; going on`);
      done();
    }, ms);
  });
  await Promise.race([step?.catch((e) => console.error(`teardown: ${what}: ${String(e)}`)), late]);
  clearTimeout(timer);
}

/** The sample configuration from wrangler.toml, with the replicas moved to the test's engines. */
function sampleConfig(replicas: string[]): string {
  const sample = /^SPILLWAY_CONFIG = '(.*)'$/m.exec(readFileSync("wrangler.toml", "utf8"))?.[1];
  if (!sample) throw new Error("wrangler.toml has no SPILLWAY_CONFIG");
  const config = JSON.parse(sample) as { logRejections?: boolean; deployments: Record<string, { replicas: string[] }> };
  for (const d of Object.values(config.deployments)) d.replicas = replicas;
  config.logRejections = false;
  return JSON.stringify(config);
}

/**
 * The demo for real, on free ports: three engine servers of different speeds, `wrangler dev` with the sample
 * configuration, the traffic generator pushing past capacity, and the dashboard in headless Chromium.
 */
describeWith(existsSync(CHROMIUM), "apt-get install -y chromium", "the live dashboard in headless Chromium", () => {
  let engines: RunningEngineServer[] = [];
  let worker: ManagedProcess | undefined;
  let context: BrowserContext | undefined;
  let base = "";
  const dirs: string[] = [];
  const traffic = new AbortController();
  let trafficDone: Promise<void> = Promise.resolve();

  beforeAll(async () => {
    engines = await Promise.all(
      // Half the demo's speeds: the same picture at half the request rate, so this test leaves CPU to the
      // timing-sensitive tests that vitest runs beside it.
      [0.5, 1, 2].map((speed) =>
        startEngineServer({ port: 0, speed, name: `x${speed}`, accessLog: false, logLevel: "warning", log: () => {} }),
      ),
    );
    const persistTo = mkdtempSync(join(tmpdir(), "spillway-dashboard-"));
    dirs.push(persistTo);
    const started = await startWorkerOnFreePort({
      vars: { SPILLWAY_CONFIG: sampleConfig(engines.map((e) => e.url)), SPILLWAY_ADMIN_TOKEN: TOKEN },
      persistTo,
      quiet: true,
    });
    worker = started.worker;
    base = started.base;
    const userDataDir = mkdtempSync(join(tmpdir(), "spillway-chromium-"));
    dirs.push(userDataDir);
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
      viewport: { width: 1440, height: 1000 },
      deviceScaleFactor: 1,
    });
  }, 90_000);

  afterAll(async () => {
    // Each step is bounded, so one that hangs on a starved machine (a CI run once spent the hook's whole minute
    // here without saying where) is named and the rest still run: wrangler and the engines are always stopped.
    traffic.abort();
    await bounded("the traffic generator", trafficDone, 15_000);
    await bounded("Chromium", context?.close(), 15_000);
    // wrangler's 5 s SIGTERM grace, then SIGKILL; the engines run in this process and close at once.
    await bounded("wrangler dev", worker?.stop(), 15_000);
    await bounded("the engines", Promise.all(engines.map((e) => e.close())), 10_000);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }, 70_000);

  it("shows nothing before the token, then charts that fill as load is admitted, queued and shed", async () => {
    if (!context) throw new Error("no browser");
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    // Nothing may leave loopback: the page and uPlot come from the Worker.
    const offHost: string[] = [];
    page.on("request", (r) => {
      if (!r.url().startsWith(base)) offHost.push(r.url());
    });

    await page.goto(`${base}/spillway/dashboard`);
    await expect.poll(() => page.locator("#token").count()).toBe(1);
    expect(await page.locator("section.deployment").count()).toBe(0);

    await page.fill("#token", "wrong-token");
    await page.click("button[type=submit]");
    await page.waitForFunction(() => document.getElementById("status")?.textContent === "token refused");
    expect(await page.locator("section.deployment").count()).toBe(0);

    trafficDone = runTraffic({
      baseUrl: base,
      phases: [
        { seconds: 3, fromRps: 3, toRps: 25 },
        { seconds: 60, fromRps: 25, toRps: 25 },
      ],
      cycles: 1,
      signal: traffic.signal,
    });
    await page.fill("#token", TOKEN);
    await page.click("button[type=submit]");
    await page.waitForSelector('section.deployment[data-deployment="demo-model"]');

    // Bounded waits on what the page shows, not on the clock: shedding with observed drain times, 12+ polls.
    await page.waitForFunction(
      () => {
        const points = (key: string) =>
          Number(document.querySelector(`[data-chart="${key}"]`)?.getAttribute("data-points"));
        return Number(document.body.dataset.polls) >= 12 && points("retry") >= 5 && points("replica-queue") >= 12;
      },
      undefined,
      { timeout: 45_000, polling: 250 },
    );
    for (const key of [
      "queue",
      "rates",
      "drain",
      "rungs",
      "retry",
      "delays",
      "replica-queue",
      "replica-usage",
      "replica-retractions",
    ]) {
      const points = Number(await page.getAttribute(`[data-chart="${key}"]`, "data-points"));
      expect(points, key).toBeGreaterThan(0);
    }
    expect(await page.locator("table.replicas td.up").count()).toBe(3);
    // The default policy's ledger, in the tile's title (how many promises depends on the machine's pace).
    const promises = page.locator(".tile", { has: page.locator(".tile-label", { hasText: "promises kept" }) });
    expect(await promises.getAttribute("title")).toMatch(/^made \d+, kept \d+, broken \d+, no-show \d+; trust /);
    expect(await promises.locator(".tile-value").textContent()).toMatch(/^(\d+%|-)$/);
    expect(await page.locator("canvas").count()).toBeGreaterThanOrEqual(9);

    const overview = (await (
      await fetch(`${base}/spillway/overview?replicas=0`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).json()) as { deployments: { admitted: number; rejected: number }[] };
    expect(overview.deployments[0]?.admitted).toBeGreaterThan(0);
    expect(overview.deployments[0]?.rejected).toBeGreaterThan(0);

    mkdirSync("docs/img", { recursive: true });
    await page.screenshot({ path: SHOT, fullPage: true });
    if (process.env.UPDATE_SCREENSHOTS === "1") copyFileSync(SHOT, "docs/img/dashboard.png");
    expect(errors).toEqual([]);
    expect(offHost).toEqual([]);
  }, 90_000);
});
