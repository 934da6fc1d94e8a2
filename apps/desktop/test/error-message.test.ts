import { describe, expect, it } from "vitest";
import { errorMessage } from "../src/renderer/components/error-message";

describe("errors as the owner reads them", () => {
  it("keeps the host's sentence and drops the names transports add", () => {
    expect(errorMessage(new Error("Error invoking remote method 'tandem:listSnapshots': Error: Snapshots are kept on the server."))).toBe(
      "Snapshots are kept on the server.",
    );
    expect(errorMessage(new Error("The server does not have this note yet"))).toBe("The server does not have this note yet");
    expect(errorMessage("plain text")).toBe("plain text");
    expect(errorMessage(new Error("409 request_already_resolved: This request was already accepted"))).toBe(
      "This request was already accepted",
    );
    expect(errorMessage(new Error("fetch failed"))).toBe("The server cannot be reached right now. Try again once you are back online.");
  });

  it("words a developer's mistake without the method's name", () => {
    const message = errorMessage(new Error("searchNotes: invalid input: query must not be empty"));
    expect(message).not.toContain("searchNotes");
    expect(message).toBe("The app sent something it should not have (query must not be empty). Please report this.");
  });

  it("says the app's own service is gone when a fetch reaches nothing", () => {
    expect(errorMessage(new TypeError("Failed to fetch"))).toBe("The app's background service is not answering. Restart the app.");
  });
});
