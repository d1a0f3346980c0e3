import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script without declarations
import { LAYERS, layerViolations } from "../../scripts/check-layers.mjs";

describe("layers (DESIGN.md section 1)", () => {
  it("no module of src/ imports a higher layer and no two folders import each other", () => {
    expect(layerViolations()).toEqual([]);
  });

  it("reports an upward import (core placed on top: every import of core breaks the rule)", () => {
    const problems: string[] = layerViolations({ ...LAYERS, core: 10 });
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.some((p) => /may not import core/.test(p))).toBe(true);
  });
});
