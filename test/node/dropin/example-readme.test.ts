import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const readme = readFileSync("examples/worker/README.md", "utf8");
const { name, version } = JSON.parse(readFileSync("packages/spillway/package.json", "utf8")) as {
  name: string;
  version: string;
};

// Until spillway is published, `npm install` in the example would ask a registry for a package it has never seen.
describe("examples/worker/README.md", () => {
  it("installs spillway from the tarball `npm run check:packages` writes, not from a registry", () => {
    const commands = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => (m[1] as string).split("\n"));
    const installs = commands.filter((line) => /^npm (install|i|ci)\b/.test(line.trim()));
    expect(installs.length).toBeGreaterThan(0);
    expect(installs[0]).toContain(`../../.wrangler/packed/${name}-${version}.tgz`);
    expect(commands.some((line) => line.startsWith("npm run check:packages"))).toBe(true);
  });
});

describe("README.md, 'Install in your Worker'", () => {
  // The section a user copies from: a bare `npm install spillway` would ask a registry for a package of that name,
  // which is not this one until it is published.
  it("installs spillway from the tarball `npm run check:packages` writes, not from a registry", () => {
    const root = readFileSync("README.md", "utf8");
    const section = root.slice(root.indexOf("## Install in your Worker"), root.indexOf("## In front of vLLM"));
    const commands = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => (m[1] as string).split("\n"));
    const installs = commands.filter((line) => /^npm (install|i)\b/.test(line.trim()));
    const spillwayInstalls = installs.filter((line) => /\bspillway\b/.test(line));
    expect(spillwayInstalls.length).toBeGreaterThan(0);
    for (const line of spillwayInstalls) expect(line).toContain(`.wrangler/packed/${name}-${version}.tgz`);
    expect(commands.some((line) => line.startsWith("npm run check:packages"))).toBe(true);
  });

  it("names every /spillway route the README documents as one a Worker built on the package does not have", () => {
    // The package's entry exports the middleware, the Durable Objects and the models routes; the admin routes and the
    // dashboard are the repository's Worker's (src/edge/worker.ts), so a user who adopts the package and reads "Edge
    // metrics" must be told that its GET /spillway/metrics is not theirs (under wrangler dev it answers 404).
    const entry = readFileSync("src/edge/index.ts", "utf8");
    expect(entry).not.toMatch(/from "\.\/(admin-routes|dashboard|worker)/);
    const root = readFileSync("README.md", "utf8");
    const section = root.slice(root.indexOf("## Install in your Worker"), root.indexOf("## In front of vLLM"));
    const documented = new Set([...root.matchAll(/\/spillway\/[a-z]+/g)].map((m) => m[0]));
    expect([...documented].sort()).toEqual(
      expect.arrayContaining(["/spillway/dashboard", "/spillway/metrics", "/spillway/overview", "/spillway/stats"]),
    );
    expect([...documented].filter((route) => !section.includes(route))).toEqual([]);
    // `/v1/models` is the package's too (the sub-app the repository's Worker mounts), and the section says so.
    expect(entry).toContain('export { spillwayModels } from "./models-routes";');
    expect(section).toContain("`spillwayModels()` serves `/v1/models`");
  });

  it("shows the example Worker's src/index.ts as it is (the one the drop-in test type-checks and runs)", () => {
    const root = readFileSync("README.md", "utf8");
    const shown = /`src\/index\.ts`[^\n]*:\n\n```ts\n([\s\S]*?)```/.exec(root)?.[1];
    expect(shown).toBe(readFileSync("examples/worker/src/index.ts", "utf8"));
  });
});
