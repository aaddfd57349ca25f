import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Hono } from "hono";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { dashboardRoutes } from "../../../src/edge/dashboard/routes";
import { describeWith } from "../../support/optional-suite";

// The page-side callbacks below run in Chromium; this is the little of the DOM they use (no DOM lib in Node).
declare const document: { getElementById(id: string): { textContent: string | null } | null };

const CHROMIUM = "/usr/bin/chromium";
const TOKEN = "link token";
/** Never resolved: Chromium's requests to it are answered by `context.route`, inside this process. */
const ORIGIN = "http://dashboard.invalid";

/**
 * The dashboard's routes as the Worker mounts them, and an overview behind the admin token (no deployments): the
 * page's own script, with no Worker, no engines and no network.
 */
function dashboardApp(overviewCalls: string[]): Hono {
  const app = new Hono();
  app.route("/spillway", dashboardRoutes());
  app.get("/spillway/overview", (c) => {
    const auth = c.req.header("authorization") ?? "";
    overviewCalls.push(auth);
    if (auth !== `Bearer ${TOKEN}`) return c.text("unauthorized", 401);
    return c.json({ atMs: 1_750_000_000_000, deployments: [] });
  });
  return app;
}

/**
 * The `#token=...` link the dashboard accepts (README: the token passed once in the URL, which never reaches a
 * server), in headless Chromium: a token with an escape that is not UTF-8 must leave the page usable.
 */
describeWith(existsSync(CHROMIUM), "apt-get install -y chromium", "the dashboard's #token= link in Chromium", () => {
  let context: BrowserContext | undefined;
  let userDataDir = "";
  const overviewCalls: string[] = [];

  beforeAll(async () => {
    const app = dashboardApp(overviewCalls);
    userDataDir = mkdtempSync(join(tmpdir(), "spillway-chromium-"));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
    await context.route("**/*", async (route) => {
      const url = new URL(route.request().url());
      if (url.origin !== ORIGIN) return route.abort();
      const headers = await route.request().allHeaders();
      const res = await app.request(url.pathname, { headers });
      await route.fulfill({
        status: res.status,
        headers: Object.fromEntries(res.headers),
        body: Buffer.from(await res.arrayBuffer()),
      });
    });
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  }, 30_000);

  /** Opens the dashboard at `hash`, collecting the page's uncaught errors. */
  async function open(hash: string): Promise<{ page: Page; errors: string[] }> {
    if (!context) throw new Error("no browser");
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`${ORIGIN}/spillway/dashboard${hash}`);
    await page.waitForLoadState("load");
    return { page, errors };
  }

  it("connects with a well-formed token from the link, and takes the token out of the address bar", async () => {
    overviewCalls.length = 0;
    const { page, errors } = await open(`#token=${encodeURIComponent(TOKEN)}`);
    await page.waitForFunction(() => document.getElementById("status")?.textContent?.startsWith("live") === true);
    expect(overviewCalls[0]).toBe(`Bearer ${TOKEN}`);
    expect(new URL(page.url()).hash).toBe("");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("reads a malformed escape (#token=%E0%A4%A) as no token: no uncaught error, the sign-in form still works", async () => {
    overviewCalls.length = 0;
    const { page, errors } = await open("#token=%E0%A4%A");
    // The script runs before the load event: what it does with the link is done. It was an uncaught URIError
    // (decodeURIComponent's), ending the script with nothing on the page to say why.
    expect(errors).toEqual([]);
    expect(await page.textContent("#status")).toMatch(/malformed/);
    expect(overviewCalls).toEqual([]); // no token sent, garbled or not
    expect(new URL(page.url()).hash).toBe("");
    expect(await page.locator("#hint").count()).toBe(1); // the sign-in prompt
    await page.fill("#token", TOKEN);
    await page.click("button[type=submit]");
    await page.waitForFunction(() => document.getElementById("status")?.textContent?.startsWith("live") === true);
    expect(errors).toEqual([]);
    await page.close();
  });
});
