import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PACKAGES } from "../../../scripts/packages";
import { LLAMA_BESIDE_PACKAGE_INSTALL_COMMAND, LLAMA_PACKAGE_VERSION } from "../../../src/engine/llama/node-llama-cpp";

describe("the packages' READMEs", () => {
  it.each(PACKAGES)("npm pack puts a README.md and the repository's LICENSE into $name", ({ dir }) => {
    const listing = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
      cwd: dir,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    const files = (JSON.parse(listing) as { files: { path: string }[] }[])[0]?.files.map((f) => f.path);
    expect(files).toContain("README.md");
    // package.json says Apache-2.0, whose section 4(a) asks that every copy carry the License's text.
    expect(files).toContain("LICENSE");
    expect(JSON.parse(readFileSync(`${dir}/package.json`, "utf8")).license).toBe("Apache-2.0");
    const license = readFileSync("LICENSE", "utf8");
    expect(license).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004/);
    expect(readFileSync(`${dir}/LICENSE`, "utf8")).toBe(license);
  });

  it("spillway's README shows the example Worker's src/index.ts as it is", () => {
    const readme = readFileSync("packages/spillway/README.md", "utf8");
    const shown = /`src\/index\.ts`:\n\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(shown).toBe(readFileSync("examples/worker/src/index.ts", "utf8"));
  });

  it("spillway's README shows the example's check-config.mjs as it is", () => {
    const readme = readFileSync("packages/spillway/README.md", "utf8");
    const shown = /`check-config\.mjs`[^\n]*:\n\n```js\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(shown).toBe(readFileSync("examples/worker/check-config.mjs", "utf8"));
  });

  it("spillway-engine's README names the node-llama-cpp version the engine asks for", () => {
    const pinned = JSON.parse(readFileSync("engines/llama/package.json", "utf8")).dependencies["node-llama-cpp"];
    expect(readFileSync("packages/engine/README.md", "utf8")).toContain(`node-llama-cpp@${pinned}`);
    // The engine's own install hint (an installed package has no engines/llama to read it from).
    expect(LLAMA_PACKAGE_VERSION).toBe(pinned);
    expect(LLAMA_BESIDE_PACKAGE_INSTALL_COMMAND).toContain(`node-llama-cpp@${pinned}`);
  });
});
