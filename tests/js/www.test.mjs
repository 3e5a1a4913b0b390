// The demo page in www/, tested in a real browser: Debian's Chromium driven by
// playwright-core opens the page from a static server on 127.0.0.1, runs each
// offline mode on each sample and checks what it draws against the package run
// in Node (counts, meter, kinds of messages), saves screenshots at desktop and
// phone width, runs the LLM modes against a mock OpenAI-compatible server that
// streams (progress, cancel, a 500 and its fallback), checks that the offline
// modes make no network request, and opens the single-file build from file://.
// Also, without a browser: the samples, the JSON/JSONL reader, the SSE reader and
// the summarizer request converted to OpenAI Chat for every format.
//
//   node --test tests/js/www.test.mjs
//
// Screenshots go to target/www-screenshots/; with WWW_SCREENSHOTS=update, the
// desktop and phone ones are also copied to www/screenshots/ (for the README).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { checkRules } from "./rules.mjs";
import { SAMPLES, SAMPLE_OPTIONS } from "../../www/samples.js";
import { parseConversation } from "../../www/parse.js";
import { MARKER_PREFIX, PLACEHOLDER, STUB_PREFIX, SUMMARY_PREFIX, messagesOf, toOpenAIChat } from "../../www/view.js";
import { chatCompletionsURL, sseData } from "../../www/summarizer.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const hasPkg = existsSync(join(root, "pkg/node.js")) && existsSync(join(root, "pkg/browser.js"));
const noBrowser = !hasPkg ? "pkg/ is not built (bash scripts/build.sh)" : !existsSync(CHROMIUM) ? `no Chromium at ${CHROMIUM} (scripts/setup.sh installs it)` : false;
const SHOTS = join(root, "target/www-screenshots");
const HEADINGS = ["## Goal", "## Constraints & Preferences", "## Progress", "### Done", "### In Progress", "### Blocked", "## Key Decisions", "## Relevant Files", "## Next Steps", "## Critical Context"];
const SUMMARY = HEADINGS.map((h) => (h === "## Goal" ? `${h}\nFix the Europe/Berlin due dates in src/billing/dates.ts (streamed summary ✓)` : h === "## Progress" ? h : `${h}\n(none)`)).join("\n");
const KEY = "sk-test-never-stored-1234";

/** The options the page passes for a sample with its fields untouched (defaults shown, sample's window and tail). */
const pageOptions = (mode) => ({
  mode,
  thresholdPercent: 0.95,
  protectHead: 3,
  tailBudgetRatio: 0.2,
  toolPruneCharThreshold: 200,
  reserveOutputTokens: 0,
  maxSummaryTokens: 4096,
  maxToolResultBytes: 50000,
  showSettingsHint: true,
  ...SAMPLE_OPTIONS,
});

const parseSample = async (s) => {
  const parsed = parseConversation(await s.text());
  assert.ok(!parsed.error, `${s.id}: ${parsed.error?.message}`);
  return parsed.value;
};

// ---- without a browser -----------------------------------------------------------------

describe("page modules in Node", () => {
  let api;
  before(async () => {
    if (hasPkg) api = await import("../../pkg/node.js");
  });

  test("every sample is read as the format it claims and overflows its window", { skip: !hasPkg && "pkg/ is not built" }, async () => {
    const formats = new Set();
    for (const s of SAMPLES) {
      const history = await parseSample(s);
      if (s.id === "broken") {
        assert.throws(() => api.measure(history, s.options), (e) => e.code === "INVALID_INPUT" && /messages\[\d+\]\.tool_call_id/.test(e.message));
        continue;
      }
      const m = api.measure(history, s.options);
      assert.equal(m.format, s.format, s.id);
      assert.ok(m.shouldCompact, `${s.id}: ${m.tokens} tokens should pass the threshold ${m.threshold}`);
      formats.add(m.format);
    }
    assert.deepEqual([...formats].sort(), ["ai-sdk", "ai-sdk-ui", "anthropic", "gemini", "moltis", "openai", "openai-responses"]);
    assert.equal(SAMPLES.find((s) => s.id === "openai-jsonl").text().trim().split("\n").length, 57);
  });

  test("a summarizer request of every format becomes valid OpenAI Chat messages", { skip: !hasPkg && "pkg/ is not built" }, async () => {
    for (const s of SAMPLES.filter((x) => x.id !== "broken")) {
      const history = await parseSample(s);
      for (const mode of ["structured", "llm_replace"]) {
        let seen = 0;
        const r = await api.compact(history, {
          ...pageOptions(mode),
          summarize: (request) => {
            const chat = toOpenAIChat(request, s.format);
            checkRules("openai", chat);
            assert.equal(chat[0].role, "system", `${s.id} ${mode}: system first`);
            assert.equal(chat.at(-1).role, "user", `${s.id} ${mode}: the instruction last`);
            // Where turns are merged (Anthropic, Gemini) the instruction closes the user message before it.
            assert.ok(chat.at(-1).content.endsWith(request.instruction), `${s.id} ${mode}: the instruction as sent`);
            for (const m of chat) assert.ok(["system", "user", "assistant", "tool"].includes(m.role), `${s.id}: role ${m.role}`);
            assert.ok(chat.some((m) => m.tool_calls?.length) && chat.some((m) => m.role === "tool"), `${s.id} ${mode}: calls and results kept apart`);
            seen++;
            return SUMMARY;
          },
        });
        assert.equal(seen, 1);
        assert.equal(r.notice.mode, mode, `${s.id} ${mode}: ${r.notice.fallback?.reason}`);
      }
    }
  });

  test("JSON and JSON Lines are read, and a mistake says where it is", () => {
    const jsonl = parseConversation('{"role":"user","content":"a"}\n\n{"role":"assistant","content":"b"}\n');
    assert.equal(jsonl.kind, "jsonl");
    assert.equal(jsonl.value.length, 2);
    const broken = parseConversation('{\n  "messages": [\n    {"role": "user" "content": "hi"}\n  ]\n}');
    assert.match(broken.error.message, /^Not valid JSON at line 3, column 21: /);
    assert.match(broken.error.excerpt, /\n {20}\^$/);
    const badLine = parseConversation('{"role":"user","content":"a"}\n{"role":"assistant","content":"b",}\n');
    assert.match(badLine.error.message, /^Not valid JSON Lines at line 2, column \d+/);
    assert.match(parseConversation('{"model": "x"}').error.message, /without a "messages", "input" or "contents" array/);
    assert.match(parseConversation("42").error.message, /a number, not a conversation/);
    assert.match(parseConversation("  ").error.message, /Paste a conversation/);
  });

  test("the SSE reader takes events split anywhere, CRLF and multi-line data", async () => {
    const text = 'data: {"a":1}\r\n\r\n: comment\n\nevent: x\ndata: {"b":\ndata: 2}\n\ndata: [DONE]\n\n';
    const bytes = new TextEncoder().encode(`${text}data: ünïcødé`);
    for (const step of [1, 3, 7, 1000]) {
      const body = new ReadableStream({
        start(c) {
          for (let i = 0; i < bytes.length; i += step) c.enqueue(bytes.slice(i, i + step));
          c.close();
        },
      });
      const events = [];
      for await (const e of sseData(body)) events.push(e);
      assert.deepEqual(events, ['{"a":1}', '{"b":\n2}', "[DONE]", "ünïcødé"], `chunks of ${step}`);
    }
    assert.equal(chatCompletionsURL("https://api.example.test/v1/"), "https://api.example.test/v1/chat/completions");
    assert.equal(chatCompletionsURL("http://127.0.0.1:9/x/chat/completions"), "http://127.0.0.1:9/x/chat/completions");
  });
});

// ---- in Chromium ---------------------------------------------------------------------------

describe("the page in Chromium", { skip: noBrowser }, () => {
  let api;
  let browser;
  let site; // the static server of the page
  let mock; // the OpenAI-compatible mock
  const mockSeen = []; // {path, auth, body}
  const mockClosed = []; // paths whose connection closed before the answer ended

  let pkgDir; // a snapshot of pkg/, so a rebuild meanwhile cannot mix versions
  before(async () => {
    pkgDir = mkdtempSync(join(tmpdir(), "www-pkg-"));
    cpSync(join(root, "pkg"), pkgDir, { recursive: true });
    api = await import(pathToFileURL(join(pkgDir, "node.js")).href);
    const { serveWww } = await import("../../scripts/www.mjs");
    site = await serveWww({ pkgDir });
    mock = await startMock(mockSeen, mockClosed);
    const { chromium } = await import("playwright-core");
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
      timeout: 60_000,
    });
    mkdirSync(SHOTS, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    await site?.close();
    await mock?.close();
    if (pkgDir) rmSync(pkgDir, { recursive: true, force: true });
  });

  /** A fresh page (own context, so a fresh profile) that records requests and fails on page errors. */
  async function openPage({ width = 1280, height = 900, url = site.url } = {}) {
    const context = await browser.newContext({ viewport: { width, height }, acceptDownloads: true });
    const page = await context.newPage();
    const problems = [];
    const requests = [];
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(`console error: ${m.text()}`);
    });
    page.on("request", (r) => requests.push(r.url()));
    await page.goto(url);
    await page.waitForSelector("body[data-ready]");
    assert.equal(await page.getAttribute("body", "data-ready"), "true", await page.textContent("#load-status"));
    return { page, context, problems, requests };
  }

  /** Picks a sample (again, if it is the one shown) and waits until the page has read it. */
  async function pickSample(page, id) {
    if ((await page.inputValue("#sample")) === id) await page.selectOption("#sample", "");
    const serial = await page.getAttribute("body", "data-input");
    await page.selectOption("#sample", id);
    await page.waitForFunction((before) => document.body.dataset.input !== before, serial);
  }

  /** Types a history into the box and waits until the page has read it. */
  /** Applies the TOML field and waits until the page says how it went (parseConfig is async). */
  async function applyToml(page) {
    await page.click("#apply-toml");
    await page.waitForFunction(() => !/^(|Reading the table…)$/.test(document.querySelector("#toml-status").textContent));
  }

  async function setHistory(page, text) {
    const serial = await page.getAttribute("body", "data-input");
    await page.fill("#history", text);
    await page.waitForFunction((before) => document.body.dataset.input !== before, serial);
  }

  async function runMode(page, mode) {
    await page.check(`input[name="mode"][value="${mode}"]`);
    await page.click("#run");
    await page.waitForSelector("body[data-state]:not([data-state='running'])", { timeout: 30_000 });
    return page.getAttribute("body", "data-state");
  }

  /** What the page shows: counts, meters, and the kinds of the drawn messages. */
  const readPage = (page) =>
    page.evaluate(() => {
      const text = (id) => document.getElementById(id)?.textContent ?? "";
      const meter = (id) => {
        const bar = document.querySelector(`#${id} [role="meter"]`);
        return bar && { now: Number(bar.getAttribute("aria-valuenow")), max: Number(bar.getAttribute("aria-valuemax")), caption: document.querySelector(`#${id} figcaption`).textContent, weights: document.querySelectorAll(`#${id} .weights span`).length, heavy: document.querySelectorAll(`#${id} .weights span.heavy`).length };
      };
      const drawn = [...document.querySelectorAll("#conversation [data-index]")];
      return {
        messagesBefore: text("messages-before"),
        messagesAfter: text("messages-after"),
        tokensBefore: text("tokens-before"),
        tokensAfter: text("tokens-after"),
        mode: text("mode-used"),
        notice: text("notice-text"),
        before: meter("meter-before"),
        after: meter("meter-after"),
        indices: drawn.map((e) => Number(e.dataset.index)),
        kinds: drawn.map((e) => e.dataset.kind),
        partKinds: [...document.querySelectorAll("#conversation [data-part-kind]")].map((e) => e.dataset.partKind),
        heavy: document.querySelectorAll("#conversation .badge.heavy").length,
        view: document.getElementById("conversation").dataset.view,
        warnings: [...document.querySelectorAll("#warnings li")].map((li) => li.dataset.code),
        validation: text("validation"),
      };
    });

  const fmt = (n) => new Intl.NumberFormat("en").format(n);

  test("each offline mode on each sample: counts, meters and kinds match the package, with no network request", async () => {
    const { page, context, problems, requests } = await openPage();
    // Any request away from the page's own server is refused and remembered.
    const foreign = [];
    await context.route("**/*", (route) => {
      const url = route.request().url();
      if (url.startsWith(site.origin)) return route.continue();
      foreign.push(url);
      return route.abort();
    });
    for (const s of SAMPLES.filter((x) => x.id !== "broken")) {
      const history = await parseSample(s);
      for (const mode of ["deterministic", "recency_preserving"]) {
        await pickSample(page, s.id);
        const before = requests.length;
        assert.equal(await runMode(page, mode), "done", `${s.id} ${mode}: ${await page.textContent("#error")}`);
        assert.equal(requests.length, before, `${s.id} ${mode}: compacting made requests: ${requests.slice(before).join(", ")}`);
        const r = api.compactSync(history, pageOptions(mode));
        const meterBefore = api.measure(history, pageOptions(mode));
        const meterAfter = api.measure(r.request ?? r.messages, pageOptions(mode));
        const seen = await readPage(page);
        const what = `${s.id} ${mode}`;
        assert.equal(seen.messagesBefore, fmt(r.notice.messagesBefore), what);
        assert.equal(seen.messagesAfter, fmt(r.notice.messagesAfter), what);
        assert.equal(seen.tokensBefore, fmt(r.notice.tokensBefore), what);
        assert.equal(seen.tokensAfter, fmt(r.notice.tokensAfter), what);
        assert.equal(seen.mode, mode, what);
        assert.equal(seen.notice, r.notice.text, what);
        // The meters: tokens against the window, one weight per message, the heaviest marked.
        assert.equal(seen.before.max, meterBefore.contextWindow, what);
        assert.equal(seen.before.now, Math.min(meterBefore.tokens, meterBefore.contextWindow), what);
        assert.match(seen.before.caption, new RegExp(`${fmt(meterBefore.tokens)} of ${fmt(meterBefore.contextWindow)} tokens`), what);
        assert.equal(seen.before.weights, meterBefore.perMessage.length, what);
        assert.equal(seen.before.heavy, 5, what);
        assert.match(seen.after.caption, new RegExp(`${fmt(meterAfter.tokens)} of ${fmt(meterAfter.contextWindow)} tokens`), what);
        assert.equal(seen.after.weights, r.messages.length, what);
        // Every message of the result is drawn once (a result under its call, so not always in order), as what it is.
        assert.equal(seen.view, "after", what);
        assert.deepEqual(seen.indices.toSorted((a, b) => a - b), r.messages.map((_, i) => i), what);
        const texts = r.messages.map((m) => JSON.stringify(m));
        const input = new Set(messagesOf(history).messages);
        assert.equal(seen.kinds.filter((k) => k === "kept").length, r.messages.filter((m) => input.has(m)).length, `${what}: kept`);
        if (mode === "deterministic") {
          assert.equal(seen.kinds.filter((k) => k === "summary").length, 1, `${what}: one summary`);
          assert.ok(texts.some((t) => t.includes(JSON.stringify(SUMMARY_PREFIX).slice(1, -1))), what);
        } else {
          assert.equal(seen.kinds.filter((k) => k === "marker").length, texts.filter((t) => t.includes(MARKER_PREFIX)).length, `${what}: markers`);
          assert.equal(seen.kinds.filter((k) => k === "marker").length, 1, `${what}: one marker`);
          assert.ok(seen.partKinds.includes("pruned") && texts.some((t) => t.includes(PLACEHOLDER)), `${what}: pruned placeholders`);
          assert.equal(seen.partKinds.filter((k) => k === "stub").length, texts.filter((t) => t.includes(STUB_PREFIX)).length, `${what}: stubs`);
          assert.ok(seen.partKinds.includes("stub"), `${what}: the interrupted call got a stub`);
          assert.ok(seen.kinds.includes("pruned") || seen.kinds.includes("marker"), what);
        }
        if (r.messages.length >= 4) assert.ok(seen.heavy >= 1, `${what}: the heaviest messages stand out`);
        // The input breaks a rule (the interrupted call); the result does not.
        assert.match(seen.validation, /The original: breaks 1 provider rule/, what);
        assert.match(seen.validation, /The result: follows the provider rules/, what);
      }
    }
    // The real sample from examples/data is a static file of the same server.
    await pickSample(page, "tau-bench");
    assert.equal(await runMode(page, "recency_preserving"), "done");
    const tau = JSON.parse(readFileSync(join(root, "examples/data/tau-bench-airline-3.json"), "utf8"));
    const r = api.compactSync(tau, { ...pageOptions("recency_preserving"), contextWindow: 8000, protectTailMin: 20, tailBudgetRatio: 0.2 });
    assert.equal((await readPage(page)).messagesAfter, fmt(r.notice.messagesAfter));

    // With the network cut, the offline modes still work.
    await context.setOffline(true);
    await pickSample(page, "anthropic");
    assert.equal(await runMode(page, "recency_preserving"), "done");
    await pickSample(page, "gemini");
    assert.equal(await runMode(page, "deterministic"), "done");
    await context.setOffline(false);

    assert.deepEqual(foreign, [], "requests away from the page's server");
    for (const url of requests) {
      const path = new URL(url).pathname;
      assert.ok(url.startsWith(site.origin) && /^\/(www|pkg|examples\/data)\//.test(path), `unexpected request ${url}`);
    }
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("screenshots at desktop and phone width; nothing overflows at 375px", async () => {
    const shots = [];
    for (const [name, width, height] of [["desktop", 1280, 900], ["phone", 375, 812]]) {
      const { page, context, problems } = await openPage({ width, height });
      await pickSample(page, "openai");
      assert.equal(await runMode(page, "recency_preserving"), "done");
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `${name}: the page is ${overflow}px wider than the screen`);
      await page.evaluate(() => window.scrollTo(0, 0));
      const top = join(SHOTS, `${name}-recency.png`);
      await page.screenshot({ path: name === "desktop" ? top : join(SHOTS, `${name}-top.png`) });
      // The result: on a phone it is below the controls.
      await page.evaluate(() => document.getElementById("results").scrollIntoView());
      await page.screenshot({ path: join(SHOTS, `${name}-result.png`) });
      // The bubbles from the marker on: pruned outputs and the stub follow it.
      await page.evaluate((phone) => {
        const at = document.querySelector(phone ? '#conversation [data-part-kind="pruned"]' : '#conversation [data-kind="marker"]');
        window.scrollTo(0, window.scrollY + at.getBoundingClientRect().top - (phone ? 160 : 8));
      }, name === "phone");
      // On the desktop, just the result column (the controls beside it are scrolled past).
      const column = await page.evaluate(() => {
        const r = document.getElementById("results").getBoundingClientRect();
        return { x: Math.max(0, r.left - 8), width: Math.min(window.innerWidth, r.right + 8) - Math.max(0, r.left - 8) };
      });
      await page.screenshot({ path: join(SHOTS, `${name}-conversation.png`), clip: name === "phone" ? undefined : { x: column.x, y: 0, width: column.width, height } });
      if (name === "phone") shots.push([join(SHOTS, "phone-conversation.png"), "phone.png"]);
      else shots.push([top, "desktop.png"], [join(SHOTS, "desktop-conversation.png"), "desktop-conversation.png"]);
      for (const mode of ["deterministic"]) {
        assert.equal(await runMode(page, mode), "done");
        await page.evaluate(() => document.getElementById("results").scrollIntoView());
        await page.screenshot({ path: join(SHOTS, `${name}-${mode}.png`) });
      }
      assert.deepEqual(problems, []);
      await context.close();
    }
    for (const [from] of shots) assert.ok(existsSync(from), from);
    if (process.env.WWW_SCREENSHOTS === "update") {
      mkdirSync(join(root, "www/screenshots"), { recursive: true });
      for (const [from, to] of shots) copyFileSync(from, join(root, "www/screenshots", to));
    }
  });

  test("keyboard only, with every control labelled", async () => {
    const { page, context, problems } = await openPage();
    const unlabelled = await page.evaluate(() =>
      [...document.querySelectorAll("input, select, textarea, button")]
        .filter((e) => !(e.labels?.length > 0 || e.getAttribute("aria-label") || e.getAttribute("aria-labelledby") || (e.tagName === "BUTTON" && e.textContent.trim())))
        .map((e) => e.id || e.outerHTML.slice(0, 80)),
    );
    assert.deepEqual(unlabelled, []);
    // Tab from the top to the sample picker, choose with the arrow keys, pick a mode, compact with Ctrl+Enter.
    await page.keyboard.press("Tab"); // skip link
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement.id), "sample");
    await page.keyboard.press("ArrowDown"); // the first sample
    await page.waitForFunction(() => !document.querySelector("#run").disabled);
    await page.focus('input[name="mode"][value="deterministic"]');
    await page.keyboard.press("ArrowDown"); // radio group: the next mode
    assert.equal(await page.evaluate(() => document.querySelector('input[name="mode"]:checked').value), "recency_preserving");
    await page.keyboard.press("Control+Enter");
    await page.waitForSelector("body[data-state='done']");
    assert.equal(await page.textContent("#mode-used"), "recency_preserving");
    // The tabs switch with the arrow keys.
    await page.focus("#tab-after");
    await page.keyboard.press("ArrowRight");
    assert.equal(await page.evaluate(() => [document.activeElement.id, document.getElementById("conversation").dataset.view].join()), "tab-before,before");
    assert.equal(await page.locator("#conversation [data-index]").count(), 57);
    // The heaviest-message links are buttons that move focus to the message.
    await page.locator("#meter-before .heaviest button").first().press("Enter");
    assert.match(await page.evaluate(() => document.activeElement.id), /^before-\d+$/);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("bad input and bad options are said in plain words, naming the place", async () => {
    const { page, context, problems } = await openPage();
    await setHistory(page, '[\n  {"role": "user", "content": "hi"},\n  {"role": "assistant" "content": "yo"}\n]');
    assert.equal(await page.isVisible("#input-error"), true);
    assert.match(await page.textContent("#input-error"), /Not valid JSON at line 3, column 24: Expected ',' or '}' after property value/);
    assert.equal(await page.isDisabled("#run"), true);

    await pickSample(page, "broken");
    const said = await page.textContent("#input-error");
    assert.match(said, /The conversation cannot be read \(INVALID_INPUT\)/);
    assert.match(said, /messages\[5\]\.tool_call_id: missing; expected a string/);
    await page.click("#input-error button"); // "Show message #5"
    assert.equal(await page.evaluate(() => document.activeElement.id), "before-5");
    assert.equal(await runMode(page, "deterministic"), "error");
    assert.equal(await page.getAttribute("#error", "data-code"), "INVALID_INPUT");

    // Nothing to gain: a tiny conversation in recency_preserving.
    await setHistory(page, JSON.stringify([{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }]));
    assert.equal(await runMode(page, "recency_preserving"), "error");
    assert.match(await page.textContent("#error"), /Nothing to gain.*\(TOO_SMALL_TO_COMPACT\)/);

    // A moltis.toml table sets the fields; an out-of-range value is clamped with a warning; a wrong type names line and column.
    await pickSample(page, "openai");
    await page.click("details.toml > summary");
    await page.fill("#toml", '[chat.compaction]\nmode = "recency_preserving"\ntail_budget_ratio = 0.9\nprotect_tail_min = 5\n');
    await applyToml(page);
    assert.match(await page.textContent("#toml-status"), /Applied: mode recency_preserving\..*tail_budget_ratio = 0\.9 is above the maximum/s);
    assert.equal(await page.inputValue("#tailBudgetRatio"), "0.8");
    assert.equal(await page.inputValue("#protectTailMin"), "5");
    assert.equal(await page.evaluate(() => document.querySelector('input[name="mode"]:checked').value), "recency_preserving");
    assert.equal(await page.inputValue("#contextWindow"), "", "no window in the config: the field stays blank (a request's model picks it)");
    // However the config writes the window (an inline table here), the field takes it.
    await page.fill("#toml", '[chat]\ncompaction = { mode = "deterministic", context_window = 12000 }\n');
    await applyToml(page);
    assert.equal(await page.inputValue("#contextWindow"), "12000");
    await page.fill("#toml", '[chat.compaction]\nmode = "deterministic"\n');
    await applyToml(page);
    assert.equal(await page.inputValue("#contextWindow"), "");
    await page.fill("#toml", "[chat.compaction]\nprotect_head = \"three\"\n");
    await applyToml(page);
    assert.match(await page.textContent("#toml-status"), /INVALID_CONFIG.*protect_head.*line 2, column/s);

    // A value out of range in a field: clamped, and the warning says so.
    await page.click("details.options > summary");
    await page.fill("#thresholdPercent", "3");
    assert.match(await page.textContent("#options-changed"), /threshold 3/);
    assert.equal(await runMode(page, "recency_preserving"), "done");
    assert.ok((await readPage(page)).warnings.includes("CLAMPED"));
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("the result downloads as JSON (and JSON Lines for JSON Lines input)", async () => {
    const { page, context, problems } = await openPage();
    for (const id of ["anthropic", "openai-jsonl"]) {
      await pickSample(page, id);
      assert.equal(await runMode(page, "recency_preserving"), "done");
      const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download")]);
      const file = await download.path();
      const text = readFileSync(file, "utf8");
      const r = api.compactSync(await parseSample(SAMPLES.find((s) => s.id === id)), pageOptions("recency_preserving"));
      if (id === "openai-jsonl") {
        assert.equal(download.suggestedFilename(), "openai-jsonl.compacted.jsonl");
        assert.deepEqual(text.trim().split("\n").map((l) => JSON.parse(l)), JSON.parse(JSON.stringify(r.messages)));
      } else {
        assert.equal(download.suggestedFilename(), "anthropic.compacted.json");
        assert.deepEqual(JSON.parse(text), JSON.parse(JSON.stringify(r.request)));
      }
    }
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: site.origin });
    await page.click("#copy");
    await page.waitForFunction(() => /Copied/.test(document.getElementById("copy-status").textContent));
    assert.equal((await page.evaluate(() => navigator.clipboard.readText())).trim().split("\n").length, Number((await readPage(page)).messagesAfter));
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("a dropped file and a picked file are read", async () => {
    const { page, context, problems } = await openPage();
    const jsonl = SAMPLES.find((x) => x.id === "openai-jsonl").text();
    let serial = await page.getAttribute("body", "data-input");
    await page.evaluate((text) => {
      const data = new DataTransfer();
      data.items.add(new File([text], "dropped.jsonl", { type: "application/x-ndjson" }));
      document.getElementById("drop").dispatchEvent(new DragEvent("drop", { dataTransfer: data, bubbles: true, cancelable: true }));
    }, jsonl);
    await page.waitForFunction((before) => document.body.dataset.input !== before, serial);
    assert.match(await page.textContent("#input-status"), /Read as OpenAI Chat Completions: 57 messages in a message array \(JSON Lines\)/);
    assert.equal(await runMode(page, "deterministic"), "done");
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download")]);
    assert.equal(download.suggestedFilename(), "dropped.compacted.jsonl");

    serial = await page.getAttribute("body", "data-input");
    const gemini = SAMPLES.find((x) => x.id === "gemini").text();
    await page.setInputFiles("#file", { name: "session.json", mimeType: "application/json", buffer: Buffer.from(gemini) });
    await page.waitForFunction((before) => document.body.dataset.input !== before, serial);
    assert.match(await page.textContent("#input-status"), /Read as Google Gemini: \d+ messages in a request object \(JSON\)/);
    // With the default window (200,000) head and tail cover it all: nothing to gain in recency_preserving.
    assert.equal(await runMode(page, "recency_preserving"), "error");
    assert.equal(await page.getAttribute("#error", "data-code"), "TOO_SMALL_TO_COMPACT");
    assert.equal(await runMode(page, "deterministic"), "done");
    assert.deepEqual(problems, []);
    await context.close();
  });

  /** Selects an LLM mode with the mock's endpoint and the test key. */
  async function llmSetup(page, sample, path, mode = "structured") {
    await pickSample(page, sample);
    await page.check(`input[name="mode"][value="${mode}"]`);
    await page.fill("#endpoint", `${mock.origin}/${path}/v1`);
    await page.fill("#model", "mock-model");
    await page.fill("#api-key", KEY);
  }

  test("structured streams the summary as it arrives, then draws it as a summary message", async () => {
    const { page, context, problems, requests } = await openPage();
    await llmSetup(page, "openai", "ok");
    const lengths = await page.evaluate(
      () =>
        new Promise((resolve) => {
          const seen = [];
          const text = document.getElementById("stream-text");
          new MutationObserver(() => seen.push(text.textContent.length)).observe(text, { childList: true, characterData: true, subtree: true });
          new MutationObserver(() => {
            if (document.body.dataset.state && document.body.dataset.state !== "running") resolve(seen);
          }).observe(document.body, { attributes: true, attributeFilter: ["data-state"] });
          document.getElementById("run").click();
        }),
    );
    assert.equal(await page.getAttribute("body", "data-state"), "done", await page.textContent("#error"));
    const partial = lengths.filter((n) => n > 0 && n < SUMMARY.length);
    assert.ok(partial.length >= 3, `the summary arrived in pieces: ${lengths.join(",")}`);
    assert.equal(Math.max(...lengths), SUMMARY.length);
    const seen = await readPage(page);
    assert.equal(seen.mode, "structured");
    assert.equal(seen.kinds.filter((k) => k === "summary").length, 1);
    assert.match(await page.textContent('#conversation [data-kind="summary"]'), /## Goal\s+Fix the Europe\/Berlin due dates/);
    assert.match(seen.notice, /Used 1801 tokens \(1234 in \+ 567 out\)/);
    await page.evaluate(() => document.getElementById("results").scrollIntoView());
    await page.screenshot({ path: join(SHOTS, "desktop-structured.png") });
    // What the mock got: the key as a bearer token, the model, a stream, valid OpenAI Chat messages.
    const call = mockSeen.findLast((c) => c.path === "/ok/v1/chat/completions");
    assert.equal(call.auth, `Bearer ${KEY}`);
    assert.equal(call.body.model, "mock-model");
    assert.equal(call.body.stream, true);
    // The key is kept nowhere: no storage, no cookie, no URL.
    const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie + location.href);
    assert.ok(!stored.includes(KEY));
    assert.ok(requests.every((u) => !u.includes(KEY)));
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("llm_replace through the same endpoint, from an Anthropic history", async () => {
    const { page, context, problems } = await openPage({ width: 375, height: 812 });
    await llmSetup(page, "anthropic", "ok", "llm_replace");
    assert.equal(await runMode(page, "llm_replace"), "done", await page.textContent("#error"));
    const seen = await readPage(page);
    assert.equal(seen.mode, "llm_replace");
    assert.deepEqual(seen.kinds, ["summary"]);
    await page.evaluate(() => document.getElementById("results").scrollIntoView());
    await page.screenshot({ path: join(SHOTS, "phone-llm_replace.png") });
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("cancel aborts the request and changes nothing", async () => {
    const { page, context, problems } = await openPage();
    await llmSetup(page, "openai", "slow");
    const closedBefore = mockClosed.length;
    await page.click("#run");
    await page.waitForFunction(() => document.getElementById("stream-text").textContent.length > 0);
    assert.equal(await page.isEnabled("#cancel"), true);
    await page.click("#cancel");
    await page.waitForSelector("body[data-state='cancelled']");
    assert.equal(await page.getAttribute("#error", "data-code"), "ABORTED");
    assert.match(await page.textContent("#error"), /Cancelled \(ABORTED\).*not changed/s);
    assert.equal(await page.isHidden("#counts"), true);
    assert.equal(await page.isDisabled("#cancel"), true);
    for (let i = 0; i < 50 && mockClosed.length === closedBefore; i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(mockClosed.length > closedBefore, "the mock saw the request go away");
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("a 500 from the endpoint: structured falls back to recency_preserving and says why; llm_replace fails", async () => {
    const { page, context, problems } = await openPage();
    await llmSetup(page, "moltis", "fail");
    assert.equal(await runMode(page, "structured"), "done");
    const seen = await readPage(page);
    assert.equal(seen.mode, "recency_preserving (asked for structured)");
    assert.match(await page.textContent("#fallback"), /Fell back to recency_preserving because the summary request failed \(LLM_FAILED\): .*HTTP 500.*the model is overloaded/);
    assert.equal(seen.kinds.filter((k) => k === "marker").length, 1);
    await page.evaluate(() => document.getElementById("results").scrollIntoView());
    await page.screenshot({ path: join(SHOTS, "desktop-fallback.png") });
    await page.check('input[name="mode"][value="llm_replace"]');
    assert.equal(await runMode(page, "llm_replace"), "error");
    assert.equal(await page.getAttribute("#error", "data-code"), "LLM_FAILED");
    assert.match(await page.textContent("#error"), /The summary request failed \(LLM_FAILED\).*HTTP 500/s);
    // The console error of the failed fetch is the browser's own report of the 500.
    assert.deepEqual(problems.filter((p) => !/status of 500/.test(p)), []);
    await context.close();
  });

  test("the single-file build opens from file:// and compacts with no server", async () => {
    const { buildWww } = await import("../../scripts/www.mjs");
    const out = mkdtempSync(join(tmpdir(), "www-build-"));
    try {
      const file = await buildWww({ out, pkgDir });
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const asked = [];
      await context.route("**/*", (route) => {
        const url = route.request().url();
        if (url.startsWith("file:") || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
        asked.push(url);
        return route.abort();
      });
      await context.setOffline(true);
      const page = await context.newPage();
      const problems = [];
      page.on("pageerror", (e) => problems.push(e.message));
      await page.goto(pathToFileURL(file).href);
      await page.waitForSelector("body[data-ready]");
      assert.equal(await page.getAttribute("body", "data-ready"), "true", await page.textContent("#load-status"));
      for (const [id, mode] of [["ai-sdk-ui", "recency_preserving"], ["tau-bench", "deterministic"]]) {
        await pickSample(page, id);
        assert.equal(await runMode(page, mode), "done", `${id} ${mode}`);
      }
      assert.equal((await readPage(page)).messagesAfter, "3", "system, summary, the closing request");
      assert.deepEqual(asked, []);
      assert.deepEqual(problems, []);
      await context.close();
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

// ---- the mock OpenAI-compatible server ---------------------------------------------------------

/**
 * POST /ok/v1/chat/completions streams SUMMARY in pieces (SSE, 60 ms apart) and
 * then the usage; /slow/… sends one piece and then nothing until the client goes;
 * /fail/… answers 500. Every request body is checked against the OpenAI pairing
 * rules (a 400 otherwise). CORS is open, as a real endpoint must be for a page.
 */
async function startMock(seen, closed) {
  const server = createServer(async (req, res) => {
    res.setHeader("access-control-allow-origin", "*");
    res.setHeader("access-control-allow-headers", "authorization, content-type, accept");
    res.setHeader("access-control-allow-methods", "POST, OPTIONS");
    if (req.method === "OPTIONS") return res.writeHead(204).end();
    const path = new URL(req.url, "http://x").pathname;
    let raw = "";
    for await (const chunk of req) raw += chunk;
    let body;
    try {
      body = JSON.parse(raw);
      checkRules("openai", body.messages);
      assert.equal(body.messages[0].role, "system");
    } catch (e) {
      res.writeHead(400, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { message: `bad request: ${e.message}` } }));
    }
    seen.push({ path, auth: req.headers.authorization, body });
    if (path.startsWith("/fail/")) {
      res.writeHead(500, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { message: "the model is overloaded" } }));
    }
    let ended = false;
    res.on("close", () => {
      if (!ended) closed.push(path);
    });
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const send = (data) => res.write(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
    const pieces = SUMMARY.match(/[\s\S]{1,24}/g);
    if (path.startsWith("/slow/")) {
      send({ choices: [{ index: 0, delta: { content: pieces[0] } }] });
      return; // and nothing more, until the client aborts
    }
    for (const piece of pieces) {
      if (res.destroyed) return;
      send({ choices: [{ index: 0, delta: { content: piece } }] });
      await new Promise((r) => setTimeout(r, 60));
    }
    send({ choices: [], usage: { prompt_tokens: 1234, completion_tokens: 567, total_tokens: 1801 } });
    send("[DONE]");
    ended = true;
    res.end();
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    origin,
    close: () =>
      new Promise((ok) => {
        server.closeAllConnections();
        server.close(ok);
      }),
  };
}
