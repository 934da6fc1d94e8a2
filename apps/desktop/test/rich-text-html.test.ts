import { fileURLToPath } from "node:url";
import type { Block } from "@tandem/core/rich-text";
import type { Browser, Page } from "playwright-core";
import { build, type Rollup } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumMissing, launchChromium } from "./browser-harness";

const HTML_MODULE = fileURLToPath(new URL("../src/renderer/rich-text/html.ts", import.meta.url));

const text = (value: string) => ({ kind: "text", text: value });

/**
 * The allow-list that reads server HTML (a briefing's sections) runs in Chromium, where the app
 * runs it: the browser's own parser decides what the markup is, and the page shows whether
 * anything ran or was fetched.
 */
describe.skipIf(chromiumMissing("rich text"))("server HTML through the allow-list, in Chromium", () => {
  let browser: Browser;
  let page: Page;
  const requests: string[] = [];
  const dialogs: string[] = [];

  const parse = (html: string) =>
    page.evaluate((input) => (window as never as { RichHtml: { parseHtml(html: string): Block[] } }).RichHtml.parseHtml(input), html);

  beforeAll(async () => {
    const output = (await build({
      configFile: false,
      logLevel: "silent",
      build: { write: false, minify: false, lib: { entry: HTML_MODULE, formats: ["iife"], name: "RichHtml" } },
    })) as Rollup.RollupOutput[];
    browser = await launchChromium();
    page = await browser.newPage();
    page.on("request", (request) => requests.push(request.url()));
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await page.setContent("<!doctype html><html><body></body></html>");
    const code = output[0]?.output[0].code;
    if (!code) throw new Error("the allow-list did not build");
    await page.addScriptTag({ content: code });
  });

  afterAll(() => browser?.close());

  it("keeps the structure a briefing uses", async () => {
    expect(
      await parse(
        "<p>You have <strong>2</strong> todos due.</p>\n<ul>\n  <li><strong>Ship</strong> · due today</li>\n  <li>Call <em>Ana</em></li>\n</ul>",
      ),
    ).toEqual([
      { kind: "paragraph", children: [text("You have "), { kind: "strong", children: [text("2")] }, text(" todos due.")] },
      {
        kind: "list",
        ordered: false,
        start: 1,
        items: [
          [{ kind: "paragraph", children: [{ kind: "strong", children: [text("Ship")] }, text(" · due today")] }],
          [{ kind: "paragraph", children: [text("Call "), { kind: "em", children: [text("Ana")] }] }],
        ],
      },
    ]);
  });

  it("drops scripts, handlers, styles, frames and images, runs and loads nothing, and keeps escaped markup as text", async () => {
    const blocks = await parse(
      '<p onclick="alert(1)" style="color:red">Hi<script>alert(2)</script><img src="https://tracker.invalid/a.png" onerror="alert(3)"></p>' +
        "<iframe srcdoc='<script>alert(4)</script>'>fallback</iframe><style>p{}</style><svg onload='alert(6)'><text>svg</text></svg>" +
        "<p>&lt;img src=x onerror=alert(5)&gt;</p>",
    );
    expect(blocks).toEqual([
      { kind: "paragraph", children: [text("Hi")] },
      { kind: "paragraph", children: [text("<img src=x onerror=alert(5)>")] },
    ]);
    // Give a stray handler or image a moment to show itself.
    await page.waitForTimeout(300);
    expect(dialogs).toEqual([]);
    expect(requests.filter((url) => url.startsWith("http"))).toEqual([]);
  });

  it("keeps links to web and mail addresses only", async () => {
    expect(
      await parse(
        '<p><a href="https://example.com" onclick="x()">ok</a> <a href="javascript:alert(1)">js</a> <a href=" data:text/html,x">data</a> <a href="mailto:a@b.c">mail</a></p>',
      ),
    ).toEqual([
      {
        kind: "paragraph",
        children: [
          { kind: "link", href: "https://example.com/", children: [text("ok")] },
          text(" js data "),
          { kind: "link", href: "mailto:a@b.c", children: [text("mail")] },
        ],
      },
    ]);
  });

  it("gives unknown elements their text, and reads headings, quotes, code and tables", async () => {
    expect(
      await parse(
        "<section><h2>Week <span>42</span></h2><blockquote>quiet</blockquote><pre>a  b</pre><custom-x>odd</custom-x><table><tr><th>A</th></tr><tr><td>1</td></tr></table></section>",
      ),
    ).toEqual([
      { kind: "heading", level: 2, children: [text("Week 42")] },
      { kind: "quote", children: [{ kind: "paragraph", children: [text("quiet")] }] },
      { kind: "code", text: "a  b" },
      { kind: "paragraph", children: [text("odd")] },
      { kind: "table", header: [[text("A")]], rows: [[[text("1")]]] },
    ]);
  });

  it("reads a briefing's instants (`<time>ISO</time>`) as times to say relative to now, and any other <time> as its text", async () => {
    expect(await parse("<p><strong>Kickoff</strong> · <time>2026-03-02T09:15:00.000Z</time> · <time>soon</time></p>")).toEqual([
      {
        kind: "paragraph",
        children: [
          { kind: "strong", children: [text("Kickoff")] },
          text(" · "),
          { kind: "time", datetime: "2026-03-02T09:15:00.000Z" },
          text(" · soon"),
        ],
      },
    ]);
  });

  it("reads deep nesting as text without exhausting the stack", async () => {
    const blocks = await parse(`${"<div><b>".repeat(3_000)}bottom${"</b></div>".repeat(3_000)}`);
    expect(JSON.stringify(blocks)).toContain("bottom");
  });
});
