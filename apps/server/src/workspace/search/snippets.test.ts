import { describe, expect, it } from "vitest";
import { buildSnippet, MARK_END, MARK_START, markSymbols, SNIPPET_CHARS } from "./snippets";

const mark = (word: string) => `${MARK_START}${word}${MARK_END}`;

describe("buildSnippet", () => {
  const headings = ["Name", "Goals", "Preferences"];
  const text = (goals: string) => ["Name", "Ada", "Goals", goals, "Learn Rust", "Preferences", "Tea, and a goal-free weekend"].join("\n");

  it("shows the section holding the most distinct matched words, under its heading", () => {
    const marked = text(`Run a ${mark("marathon")}`)
      .replace("\nGoals\n", `\n${mark("Goals")}\n`)
      .replace("goal-free", `${mark("goal")}-free`);
    expect(buildSnippet(marked, headings)).toBe("Goals — Run a marathon · Learn Rust");
  });

  it("shows the first section with text when nothing is marked", () => {
    expect(buildSnippet(text("Run"), headings)).toBe("Name — Ada");
    expect(buildSnippet("intro line\n\nmore", [])).toBe("intro line · more");
    expect(buildSnippet("", [])).toBe("");
  });

  it("cuts a long section around its first match, at word boundaries", () => {
    const words = Array.from({ length: 200 }, (_, i) => `word${i}`);
    words[150] = mark("needle");
    const snippet = buildSnippet(words.join(" "), []);
    expect(snippet.length).toBeLessThanOrEqual(SNIPPET_CHARS);
    expect(snippet).toMatch(/^….*needle.*…$/);
    expect(snippet).not.toMatch(/[\u0002\u0003]/);
    expect(snippet.split(" ").every((word) => /^…?(word\d+|needle)…?$/.test(word))).toBe(true);
  });

  it("counts emoji marked by markSymbols as matches", () => {
    const marked = markSymbols("Plain\nParty\nCake 🎂 here", ["🎂"]);
    expect(marked).toContain(mark("🎂"));
    expect(buildSnippet(marked, ["Party"])).toBe("Party — Cake 🎂 here");
  });
});
