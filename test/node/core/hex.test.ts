import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bytesToHex } from "../../../src/core/hex";
import { propertyRuns } from "../../support/property-runs";

describe("bytesToHex", () => {
  it("spells every byte as two lower-case hex digits, in order", () => {
    expect(bytesToHex(new Uint8Array([0, 1, 15, 16, 171, 255]))).toBe("00010f10abff");
    expect(bytesToHex(new Uint8Array([]))).toBe("");
  });

  it("is Node's hex encoding, for a Uint8Array or an ArrayBuffer (a digest)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const expected = Buffer.from(bytes).toString("hex");
        expect(bytesToHex(bytes)).toBe(expected);
        expect(bytesToHex(bytes.slice().buffer)).toBe(expected);
      }),
      propertyRuns(100, 20261207),
    );
  });
});
