import path from "node:path";
import { describe, expect, it } from "vitest";
import { DOCS_SCREENSHOTS_DIR, screenshotPath, UPDATE_SCREENSHOTS_ENV } from "./screenshots";

describe("browser tests' screenshots", () => {
  it("go to a temporary folder under `npm test`, and to docs/screenshots only under `npm run screenshots`", () => {
    const inTest = screenshotPath("notes", {});
    expect(path.relative(DOCS_SCREENSHOTS_DIR, inTest).startsWith("..")).toBe(true);
    expect(path.basename(inTest)).toBe("notes.png");
    expect(screenshotPath("notes", { [UPDATE_SCREENSHOTS_ENV]: "1" })).toBe(path.join(DOCS_SCREENSHOTS_DIR, "notes.png"));
  });
});
