import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { uplotAssetSource } from "../../../scripts/vendor-uplot";

describe("the bundled uPlot", () => {
  it("matches the pinned package (rerun npm run vendor:uplot after changing the version)", () => {
    expect(readFileSync("src/edge/dashboard/uplot-asset.ts", "utf8")).toBe(uplotAssetSource());
  });
});
