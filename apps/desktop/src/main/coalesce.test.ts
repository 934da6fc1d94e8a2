import { describe, expect, it } from "vitest";
import { coalesce } from "./coalesce";

describe("coalesce", () => {
  it("never overlaps runs and folds a burst of calls into one more run", async () => {
    let running = 0;
    let runs = 0;
    let release: () => void = () => {};
    const refresh = coalesce(
      async () => {
        running++;
        expect(running).toBe(1);
        runs++;
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        running--;
      },
      () => {},
    );
    const first = refresh();
    const burst = [refresh(), refresh(), refresh()];
    release();
    await new Promise((resolve) => setTimeout(resolve, 0));
    release();
    await Promise.all([first, ...burst]);
    expect(runs).toBe(2);
  });

  it("reports a failing run and keeps working", async () => {
    const errors: unknown[] = [];
    let fail = true;
    const refresh = coalesce(
      async () => {
        if (fail) throw new Error("offline");
      },
      (error) => errors.push(error),
    );
    await refresh();
    fail = false;
    await refresh();
    expect(errors).toHaveLength(1);
  });
});
