import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createRenderer, escapedText, type Renderer, type RendererOptions } from "../../src/render/render.js";
import { TEST_BUILD_DIR } from "../support/build-cli.js";
import { tempDir } from "../support/harness.js";

const renderers: Renderer[] = [];
afterEach(async () => {
  await Promise.all(renderers.splice(0).map((r) => r.close()));
});

function renderer(options: RendererOptions = {}): { r: Renderer; failures: string[] } {
  const failures: string[] = [];
  const r = createRenderer({ onFailure: (e) => failures.push(e.message), ...options });
  renderers.push(r);
  return { r, failures };
}

const REPLY = "**Widgetron** [docs](https://example.com/docs) <script>alert(1)</script> <img src=https://t.example/p.gif>\n\n- one\n- two";
const SAFE_REPLY =
  '<p><strong>Widgetron</strong> <a href="https://example.com/docs" target="_blank" rel="noopener noreferrer">docs</a>  </p>\n<ul>\n<li>one</li>\n<li>two</li>\n</ul>';

describe("the render worker", () => {
  /*
   * One renderer through its life, because every worker it starts loads jsdom: a worker per
   * claim here was most of this file's time, and each claim below reads the same worker.
   */
  it("starts no worker until a reply needs the sanitiser, renders many replies at once in that one worker, keeps it loaded while idle and asked to release memory, and close() stops it", async () => {
    const { r, failures } = renderer();
    expect(await r.render("**plain** reply")).toBe("<p><strong>plain</strong> reply</p>");
    expect(r.stats()).toMatchObject({ workersStarted: 0, running: 0 });
    expect(await r.render(REPLY)).toBe(SAFE_REPLY);
    expect(r.stats()).toMatchObject({ workersStarted: 1, running: 1 });

    const out = await Promise.all(Array.from({ length: 20 }, (_, i) => r.render(`${REPLY}\n\nreply ${i}`)));
    for (const [i, html] of out.entries()) expect(html).toBe(`${SAFE_REPLY}\n<p>reply ${i}</p>`);
    expect(r.stats()).toMatchObject({ workersStarted: 1, running: 1, pending: 0, inThread: false });

    // What a quiet server does: the worker collects its garbage and stays.
    r.releaseMemory();
    // Before, the worker stopped after an idle period and the next reply waited for jsdom to load again.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(r.stats()).toMatchObject({ workersStarted: 1, running: 1 });
    expect(await r.render(REPLY)).toBe(SAFE_REPLY);
    expect(r.stats()).toMatchObject({ workersStarted: 1, running: 1, pending: 0 });
    expect(failures).toEqual([]);

    await r.close();
    expect(r.stats().running).toBe(0);
  });

  it("inThread loads the sanitiser in this thread instead of a worker", async () => {
    const { r, failures } = renderer({ inThread: true });
    expect(await r.render(REPLY)).toBe(SAFE_REPLY);
    expect(r.stats()).toMatchObject({ workersStarted: 0, running: 0, inThread: true });
    expect(failures).toEqual([]);
  });

  it("answers a render that takes too long as escaped text, and reports it", async () => {
    const { r, failures } = renderer({ timeoutMs: 1 });
    // Megabytes of Markdown take far longer than 1 ms to render however fast the machine; a busier one only widens the gap.
    const huge = `${REPLY}\n\n${"word ".repeat(400_000)}`;
    expect(await r.render(huge)).toBe(escapedText(huge));
    expect(failures).toEqual([expect.stringContaining("took over 1 ms")]);
    expect(escapedText(REPLY)).not.toMatch(/<(script|img|a)\b/);
  });

  // Both on one renderer, because each worker loads jsdom: a full queue refuses renders without touching the worker that recycling replaces.
  it("bounds the queue: renders beyond it are answered at once as escaped text; and replaces its worker every `recycleAfter` renders without failing or delaying a render", async () => {
    const { r, failures } = renderer({ recycleAfter: 5, maxQueue: 2 });
    const out = await Promise.all(Array.from({ length: 5 }, () => r.render(REPLY)));
    expect(out.filter((html) => html === SAFE_REPLY)).toHaveLength(2);
    expect(out.filter((html) => html === escapedText(REPLY))).toHaveLength(3);
    expect(failures).toHaveLength(3);
    expect(r.stats().workersStarted).toBe(1);

    // One at a time, so the queue never fills: each render from here must come back rendered.
    for (let i = 0; i < 12; i++) expect(await r.render(REPLY)).toBe(SAFE_REPLY);
    // Each replacement warms up before it takes over, so at least one recycle happened in 12 renders.
    await expect.poll(() => r.stats().workersStarted, { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
    for (let i = 0; i < 5; i++) expect(await r.render(REPLY)).toBe(SAFE_REPLY);
    await expect.poll(() => r.stats().running, { timeout: 15_000 }).toBe(1);
    expect(failures).toHaveLength(3);
  }, 60_000); // Completion, not speed: it loads jsdom in two workers one after another.
});

describe("escapedText", () => {
  it("escapes markup and keeps paragraphs and line breaks", () => {
    expect(escapedText(`a <b>&"'\nc\n\n d`)).toBe("<p>a &#60;b&#62;&#38;&#34;&#39;<br>c</p>\n<p> d</p>");
    expect(escapedText("  ")).toBe("");
  });
});

describe("the built package", () => {
  it("starts render-worker.js from dist and renders operator messages through it", () => {
    const { dir, cleanup } = tempDir();
    try {
      const script = `
        const { createChatService } = await import(${JSON.stringify(join(TEST_BUILD_DIR, "index.js"))});
        const service = await createChatService({ db: ${JSON.stringify(join(dir, "t.db"))}, env: {} });
        // No first-run setup: ingesting the bundled docs is not what this checks.
        const organization = await service.orgs.create({ name: "Acme" });
        await service.chatbots.create({ organization_id: organization.id, slug: "demo", name: "Demo" });
        const { conversation_id } = await service.conversations.start(organization.id, "demo", {});
        const message = await service.chat.post(organization.id, conversation_id, { role: "assistant", message: ${JSON.stringify(REPLY)} });
        process.stdout.write(JSON.stringify({ content: message.content }));
        await service.close();`;
      const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 60_000 });
      expect(run.stderr).not.toContain("could not start");
      expect(run.status).toBe(0);
      expect(JSON.parse(run.stdout).content).toContain(SAFE_REPLY);
    } finally {
      cleanup();
    }
  });
});
