// The demo page: reads a conversation, measures it, compacts it with the chosen
// mode and draws what came out. `start(api)` takes the package's exports, so the
// same code runs from the served page (main.js) and the single-file build
// (standalone.js).
import { SAMPLES } from "./samples.js";
import { parseConversation } from "./parse.js";
import { FORMAT_NAMES, heldApartSystem, markParts, messageKind, messagesOf, normalize } from "./view.js";
import { chatCompletionsURL, openAICompatibleSummarizer } from "./summarizer.js";

/** The README's defaults, as the option fields show them. */
export const DEFAULTS = {
  contextWindow: "",
  thresholdPercent: 0.95,
  protectHead: 3,
  protectTailMin: 20,
  tailBudgetRatio: 0.2,
  toolPruneCharThreshold: 200,
  reserveOutputTokens: 0,
  maxSummaryTokens: 4096,
  maxToolResultBytes: 50000,
  summaryModel: "",
  format: "auto",
  alternation: "auto",
  tokenizer: "auto",
  showSettingsHint: true,
  pinRoles: [],
};
const NUMBER_FIELDS = ["contextWindow", "thresholdPercent", "protectHead", "protectTailMin", "tailBudgetRatio", "toolPruneCharThreshold", "reserveOutputTokens", "maxSummaryTokens", "maxToolResultBytes"];
const LLM_MODES = new Set(["structured", "llm_replace"]);

const ERROR_TITLES = {
  INVALID_INPUT: "The conversation cannot be read",
  INVALID_CONFIG: "An option is not right",
  EMPTY_HISTORY: "There is nothing to compact",
  TOO_SMALL_TO_COMPACT: "Nothing to gain: the conversation is already small",
  SUMMARIZER_REQUIRED: "This mode needs a summary model",
  LLM_FAILED: "The summary request failed",
  EMPTY_SUMMARY: "The model returned an empty summary",
  ABORTED: "Cancelled",
  STALE_HISTORY: "The conversation changed meanwhile",
};
const WARNING_TITLES = {
  CLAMPED: "A value was out of range and was adjusted",
  UNKNOWN_OPTION: "An option is not known",
  EMPTY_MESSAGE_DROPPED: "An empty message was dropped",
  SUMMARY_INPUT_SHRUNK: "The summary model got a shortened conversation",
  SUMMARY_WINDOW_TOO_SMALL: "The window is small for the summary model",
  TAIL_PRUNED: "Tool outputs in the kept tail were pruned to fit",
  TAIL_SHORTENED: "Fewer recent messages were kept, to fit",
  TEXTS_SHORTENED: "Long texts were cut in the middle, to fit",
  DOES_NOT_FIT: "The result still does not fit the threshold",
};
const FALLBACK_WORDS = {
  LLM_FAILED: "the summary request failed",
  TIMEOUT: "the summary took longer than the time limit",
  EMPTY_SUMMARY: "the model returned an empty summary",
  QUALITY_CHECK: "the summary failed the quality check twice",
  NOTHING_TO_SUMMARIZE: "only pinned messages or UI notices lie between head and tail",
};
const KIND_WORDS = { kept: "kept", pruned: "pruned", stub: "stub", marker: "marker", summary: "summary", edited: "edited", shortened: "shortened" };

const nf = new Intl.NumberFormat("en");
const num = (n) => nf.format(Math.round(n));
const pct = (x) => `${Math.round(x * 100)}%`;

/** A tiny element builder: el("p", {class: "x"}, "text", child). */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "style") node.setAttribute("style", v);
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(node.dataset, v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) if (c !== undefined && c !== null && c !== false) node.append(c instanceof Node ? c : String(c));
  return node;
}

const $ = (id) => document.getElementById(id);

/** Long text shown clipped, with a button that shows all of it. */
function clipped(text, { lines = 12, chars = 900, className = "" } = {}) {
  const all = String(text);
  const cutAt = Math.min(chars, nthNewline(all, lines));
  const pre = el("pre", { class: `body ${className}`.trim() });
  if (all.length <= cutAt + 80) {
    pre.textContent = all;
    return pre;
  }
  pre.textContent = `${all.slice(0, cutAt)}…`;
  const button = el("button", { type: "button", class: "more", "aria-expanded": "false" }, `Show all ${num(all.length)} characters`);
  button.addEventListener("click", () => {
    const open = button.getAttribute("aria-expanded") === "true";
    pre.textContent = open ? `${all.slice(0, cutAt)}…` : all;
    button.setAttribute("aria-expanded", String(!open));
    button.textContent = open ? `Show all ${num(all.length)} characters` : "Show less";
  });
  return el("div", { class: "clip" }, pre, button);
}

function nthNewline(text, n) {
  let at = -1;
  for (let i = 0; i < n; i++) {
    at = text.indexOf("\n", at + 1);
    if (at < 0) return text.length;
  }
  return at;
}

/** The real tau-bench airline conversation of examples/data/ (MIT), its text from `text()`. */
export function tauBenchSample(text) {
  return {
    id: "tau-bench",
    label: "Airline support — a real gpt-4o conversation (tau-bench, MIT)",
    format: "openai",
    options: { contextWindow: 8000 },
    text,
  };
}

export function start(api, { extraSamples = [] } = {}) {
  const samples = [...SAMPLES, ...extraSamples];
  const state = {
    input: null, // {value, kind, name}
    format: undefined, // as the library reads the input
    beforeMeter: null,
    result: null,
    afterMeter: null,
    options: null, // the options of the last compaction
    view: "before",
    controller: null,
    focusIndex: undefined,
  };

  // ---- samples, input -------------------------------------------------------------------

  const sampleSelect = $("sample");
  for (const s of samples) sampleSelect.append(el("option", { value: s.id }, s.label));
  sampleSelect.addEventListener("change", async () => {
    const s = samples.find((x) => x.id === sampleSelect.value);
    if (!s) return;
    setOptions({ ...DEFAULTS, ...(s.options ?? {}) });
    try {
      $("history").value = await s.text();
    } catch (e) {
      showInputError({ message: `The sample could not be loaded: ${e?.message ?? e}` });
      return;
    }
    state.name = s.id;
    inputChanged();
  });

  const history = $("history");
  let inputTimer;
  history.addEventListener("input", () => {
    state.name = undefined;
    sampleSelect.value = "";
    clearTimeout(inputTimer);
    inputTimer = setTimeout(inputChanged, 250);
  });

  async function takeFile(file) {
    if (!file) return;
    try {
      history.value = await file.text();
    } catch (e) {
      showInputError({ message: `Could not read ${file.name}: ${e?.message ?? e}` });
      return;
    }
    state.name = file.name.replace(/\.(jsonl|ndjson|json|txt)$/i, "");
    sampleSelect.value = "";
    inputChanged();
  }
  $("file").addEventListener("change", (e) => takeFile(e.target.files?.[0]));
  const drop = $("drop");
  drop.addEventListener("dragover", (e) => {
    e.preventDefault();
    drop.classList.add("over");
  });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    const file = e.dataTransfer?.files?.[0];
    if (file) takeFile(file);
    else if (e.dataTransfer?.getData("text")) {
      history.value = e.dataTransfer.getData("text");
      inputChanged();
    }
  });
  // A file dropped next to the box must not replace the page.
  window.addEventListener("dragover", (e) => e.preventDefault());
  window.addEventListener("drop", (e) => e.preventDefault());

  function showInputError(problem, code) {
    const box = $("input-error");
    box.replaceChildren(
      el("p", {}, el("strong", {}, code ? `${ERROR_TITLES[code] ?? code} (${code})` : "This is not a conversation yet"), el("br"), problem.message),
      problem.excerpt ? el("pre", { class: "excerpt" }, problem.excerpt) : "",
      jumpButton(problem.message),
    );
    box.hidden = false;
  }

  /** A button that shows the message an error names (`messages[12]…`) in the original. */
  function jumpButton(message) {
    const m = /(?:messages|input|contents)\[(\d+)\]/.exec(String(message));
    if (!m || !state.input) return "";
    const index = Number(m[1]);
    state.flagged = index; // the original view marks it
    return el("button", { type: "button", class: "quiet", onclick: () => showMessage("before", index) }, `Show message #${index}`);
  }

  let inputSerial = 0;
  function inputChanged() {
    document.body.dataset.input = String(++inputSerial); // lets a test wait for the input to be read
    state.result = null;
    state.flagged = undefined;
    state.afterMeter = null;
    clearResult();
    const parsed = parseConversation(history.value);
    $("input-error").hidden = true;
    if (parsed.error) {
      state.input = null;
      state.beforeMeter = null;
      $("input-status").textContent = "";
      if (history.value.trim() !== "") showInputError(parsed.error);
      else $("input-status").textContent = parsed.error.message;
      renderMeters();
      $("views").hidden = true;
      updateRunButton();
      return;
    }
    state.input = { value: parsed.value, kind: parsed.kind };
    measureInput();
    updateRunButton();
  }

  /** Measures the input with the current options: the status line, the meter and the original view. */
  function measureInput() {
    if (!state.input) return;
    const { value, kind } = state.input;
    const count = messagesOf(value).messages.length;
    let options;
    try {
      options = readOptions();
      state.beforeMeter = api.measure(value, options);
      state.format = state.beforeMeter.format;
    } catch (e) {
      state.beforeMeter = null;
      state.format = options?.format && options.format !== "auto" ? options.format : undefined;
      $("input-status").textContent = `${count} messages (${kind === "jsonl" ? "JSON Lines" : "JSON"}).`;
      showInputError({ message: e?.message ?? String(e) }, e?.code);
      renderMeters();
      if (!state.result) renderViews("before");
      return;
    }
    $("input-error").hidden = true;
    const m = state.beforeMeter;
    const shape = Array.isArray(value) ? "a message array" : "a request object";
    $("input-status").textContent = `Read as ${FORMAT_NAMES[m.format] ?? m.format}: ${count} messages in ${shape} (${kind === "jsonl" ? "JSON Lines" : "JSON"}), about ${num(m.tokens)} tokens.`;
    renderMeters();
    renderValidation();
    if (!state.result) renderViews("before");
  }

  // ---- options --------------------------------------------------------------------------

  const mode = () => document.querySelector('input[name="mode"]:checked')?.value ?? "deterministic";

  function setOptions(o) {
    for (const k of NUMBER_FIELDS) if (k in o) $(k).value = o[k] === undefined || o[k] === "" ? "" : String(o[k]);
    if ("summaryModel" in o) $("summaryModel").value = o.summaryModel ?? "";
    for (const k of ["format", "alternation", "tokenizer"]) if (k in o) $(k).value = o[k] ?? DEFAULTS[k];
    if ("showSettingsHint" in o) $("showSettingsHint").checked = Boolean(o.showSettingsHint);
    if ("pinRoles" in o) for (const box of document.querySelectorAll('input[name="pinRoles"]')) box.checked = (o.pinRoles ?? []).includes(box.value);
    if (o.mode) {
      const radio = document.querySelector(`input[name="mode"][value="${o.mode}"]`);
      if (radio) radio.checked = true;
      modeChanged();
    }
    describeChanged();
  }

  /** The options for the library from the form: blank fields are left out (the library's defaults). */
  function readOptions() {
    const o = { mode: mode() };
    for (const k of NUMBER_FIELDS) {
      const field = $(k);
      const raw = field.value.trim();
      if (raw === "") {
        if (field.validity?.badInput) throw Object.assign(new Error(`${field.labels?.[0]?.textContent ?? k}: not a number`), { code: "INVALID_CONFIG" });
        continue;
      }
      o[k] = Number(raw);
    }
    const summaryModel = $("summaryModel").value.trim();
    if (summaryModel) o.summaryModel = summaryModel;
    for (const k of ["format", "alternation", "tokenizer"]) if ($(k).value !== DEFAULTS[k]) o[k] = $(k).value;
    o.showSettingsHint = $("showSettingsHint").checked;
    const pins = [...document.querySelectorAll('input[name="pinRoles"]:checked')].map((b) => b.value);
    if (pins.length) o.pinRoles = pins;
    return o;
  }

  const FIELD_WORDS = {
    contextWindow: "window",
    thresholdPercent: "threshold",
    protectHead: "head",
    protectTailMin: "tail",
    tailBudgetRatio: "tail budget",
    toolPruneCharThreshold: "prune over",
    reserveOutputTokens: "reserved",
    maxSummaryTokens: "summary tokens",
    maxToolResultBytes: "tool output cap",
    summaryModel: "summary model",
    format: "format",
    alternation: "alternation",
    tokenizer: "tokenizer",
  };

  /** The options summary line names what differs from the defaults, so a closed section hides nothing. */
  function describeChanged() {
    const changed = [];
    for (const [k, word] of Object.entries(FIELD_WORDS)) {
      const v = $(k).value.trim();
      if (v !== String(DEFAULTS[k]) && !(NUMBER_FIELDS.includes(k) && v !== "" && Number(v) === Number(DEFAULTS[k]))) changed.push(`${word} ${v === "" ? "default" : v}`);
    }
    if (!$("showSettingsHint").checked) changed.push("no settings hint");
    const pins = [...document.querySelectorAll('input[name="pinRoles"]:checked')].map((b) => b.value);
    if (pins.length) changed.push(`keep ${pins.join(", ")}`);
    $("options-changed").textContent = changed.length ? `(changed: ${changed.join(", ")})` : "(the defaults)";
  }

  function modeChanged() {
    const llm = LLM_MODES.has(mode());
    $("llm").hidden = !llm;
    $("run").textContent = llm ? "Compact with the summary model" : "Compact";
  }
  for (const radio of document.querySelectorAll('input[name="mode"]')) radio.addEventListener("change", modeChanged);

  let optionsTimer;
  const optionsMoved = () => {
    if (state.result) $("run-status").textContent = "The options changed since this result: compact again to update it.";
  };
  for (const radio of document.querySelectorAll('input[name="mode"]')) radio.addEventListener("change", optionsMoved);
  $("option-fields").addEventListener("input", () => {
    optionsMoved();
    describeChanged();
    clearTimeout(optionsTimer);
    optionsTimer = setTimeout(measureInput, 200);
  });
  $("option-fields").addEventListener("change", () => {
    describeChanged();
    clearTimeout(optionsTimer);
    optionsTimer = setTimeout(measureInput, 50);
  });
  $("reset").addEventListener("click", () => {
    setOptions(DEFAULTS);
    measureInput();
  });

  $("apply-toml").addEventListener("click", async () => {
    const status = $("toml-status");
    const text = $("toml").value;
    // (parseConfig loads its TOML reader on the first call)
    status.className = "status";
    status.replaceChildren("Reading the table…");
    try {
      const { options, warnings, contextWindowGiven } = await api.parseConfig(text);
      const next = { ...DEFAULTS, ...options, pinRoles: options.pinRoles ?? [] };
      // Keep the window field blank unless the config sets one (the options then
      // carry it), so a request's model still picks it.
      if (!contextWindowGiven) next.contextWindow = "";
      next.format = options.format ?? "auto";
      if (!next.alternation) next.alternation = "auto";
      if (!next.summaryModel) next.summaryModel = "";
      setOptions(next);
      status.className = "status ok";
      status.replaceChildren(
        `Applied: mode ${options.mode}.`,
        ...(warnings.length ? [el("ul", {}, warnings.map((w) => el("li", {}, el("strong", {}, WARNING_TITLES[w.code] ?? w.code), `: ${w.message}`)))] : []),
      );
      measureInput();
    } catch (e) {
      status.className = "status bad";
      status.replaceChildren(el("strong", {}, `${ERROR_TITLES[e?.code] ?? "Could not read the table"}${e?.code ? ` (${e.code})` : ""}: `), e?.message ?? String(e));
    }
  });

  // ---- compacting -----------------------------------------------------------------------

  function updateRunButton() {
    $("run").disabled = !state.input || Boolean(state.controller);
  }

  async function compactNow() {
    if (!state.input || state.controller) return;
    clearResult();
    state.result = null; // the previous result goes; the original shows until the new one is there
    state.afterMeter = null;
    renderMeters();
    renderViews("before");
    const runStatus = $("run-status");
    let options;
    try {
      options = readOptions();
    } catch (e) {
      showError(e);
      return;
    }
    const started = performance.now();
    document.body.dataset.state = "running";
    try {
      let result;
      if (LLM_MODES.has(options.mode)) result = await compactWithModel(options);
      else result = api.compactSync(state.input.value, options);
      const ms = performance.now() - started;
      state.result = result;
      state.options = options;
      runStatus.textContent = `Compacted in ${ms < 10 ? ms.toFixed(1) : num(ms)} ms.`;
      renderResult();
      revealResults();
      document.body.dataset.state = "done";
    } catch (e) {
      runStatus.textContent = "";
      showError(e);
      document.body.dataset.state = e?.code === "ABORTED" ? "cancelled" : "error";
    } finally {
      state.controller = null;
      $("cancel").disabled = true;
      $("stream").hidden = true;
      updateRunButton();
    }
  }

  async function compactWithModel(options) {
    const endpoint = $("endpoint").value.trim();
    let url;
    try {
      url = chatCompletionsURL(endpoint);
    } catch {
      throw Object.assign(new Error(`"${endpoint}" is not a URL; give the endpoint's address, e.g. https://api.openai.com/v1`), { code: "INVALID_CONFIG" });
    }
    const model = $("model").value.trim();
    if (!model && !options.summaryModel) throw Object.assign(new Error("Give the summary model's name (e.g. gpt-4o-mini)."), { code: "INVALID_CONFIG" });
    const timeout = $("timeoutMs").value.trim();
    const controller = new AbortController();
    state.controller = controller;
    $("cancel").disabled = false;
    updateRunButton();
    const streamBox = $("stream");
    const streamText = $("stream-text");
    const runStatus = $("run-status");
    let received = 0;
    const summarize = openAICompatibleSummarizer({
      endpoint: url,
      apiKey: $("api-key").value, // read now, kept in this closure only
      model: model || options.summaryModel,
      format: state.format,
      onAttempt: (attempt) => {
        received = 0;
        streamText.textContent = "";
        streamBox.hidden = false;
        runStatus.textContent = attempt > 1 ? "The first summary failed the quality check; asking the model once more…" : `Asking ${model || options.summaryModel} for a summary…`;
      },
      onText: (piece) => {
        received += piece.length;
        streamText.append(piece);
        runStatus.textContent = `Receiving the summary: ${num(received)} characters so far…`;
      },
    });
    const o = { ...options, summarize, signal: controller.signal };
    if (timeout !== "") o.timeoutMs = Number(timeout);
    return api.compact(state.input.value, o);
  }

  $("run").addEventListener("click", compactNow);
  $("cancel").addEventListener("click", () => state.controller?.abort(new Error("cancelled on the page")));
  document.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      compactNow();
    } else if (e.key === "Escape" && state.controller) {
      state.controller.abort(new Error("cancelled on the page"));
    }
  });

  /** On a narrow screen the result is below the controls: bring its heading into view. */
  function revealResults() {
    const heading = $("results-h").getBoundingClientRect();
    if (heading.top < 0 || heading.top > window.innerHeight - 80) $("results").scrollIntoView({ block: "start" });
  }

  function showError(e) {
    const code = e?.code;
    const box = $("error");
    const title = ERROR_TITLES[code] ?? "Something went wrong";
    const cause = e?.cause instanceof Error && !String(e.message).includes(e.cause.message) ? e.cause.message : "";
    const advice =
      code === "TOO_SMALL_TO_COMPACT"
        ? "Try a smaller context window, fewer head or tail messages, or the deterministic mode."
        : code === "ABORTED"
          ? "The conversation was not changed."
          : code === "LLM_FAILED"
            ? "llm_replace has no fallback: the conversation was not changed. The structured mode falls back to recency_preserving instead."
            : "";
    box.replaceChildren(
      el("p", {}, el("strong", {}, code ? `${title} (${code})` : title)),
      el("p", { class: "what" }, e?.message ?? String(e)),
      cause ? el("p", { class: "cause" }, `Cause: ${cause}`) : "",
      advice ? el("p", {}, advice) : "",
      jumpButton(e?.message),
    );
    box.dataset.code = code ?? "";
    box.hidden = false;
    revealResults();
  }

  // ---- drawing the result -----------------------------------------------------------------

  function clearResult() {
    for (const id of ["error", "counts", "notice", "warnings", "actions", "stream"]) $(id).hidden = true;
    $("run-status").textContent = "";
    $("meter-after").hidden = true;
    $("copy-status").textContent = "";
    delete document.body.dataset.state;
  }

  function renderResult() {
    const r = state.result;
    const n = r.notice;
    const after = r.request ?? r.messages;
    try {
      state.afterMeter = api.measure(after, state.options);
    } catch {
      state.afterMeter = null;
    }
    $("messages-before").textContent = num(n.messagesBefore);
    $("messages-after").textContent = num(n.messagesAfter);
    $("tokens-before").textContent = num(n.tokensBefore);
    $("tokens-after").textContent = num(n.tokensAfter);
    $("tokens-saved").textContent = n.tokensBefore > 0 ? `(${n.tokensAfter <= n.tokensBefore ? "−" : "+"}${pct(Math.abs(1 - n.tokensAfter / n.tokensBefore))})` : "";
    $("mode-used").textContent = n.mode === n.requestedMode ? n.mode : `${n.mode} (asked for ${n.requestedMode})`;
    $("fits").textContent = n.fits ? "yes" : "no — see the warning";
    $("counts").hidden = false;

    $("notice-text").textContent = n.text;
    const fb = $("fallback");
    if (n.fallback) {
      fb.replaceChildren(el("strong", {}, `Fell back to ${n.mode}`), ` because ${FALLBACK_WORDS[n.fallback.code] ?? n.fallback.code} (${n.fallback.code}): ${n.fallback.reason}`);
      fb.hidden = false;
    } else fb.hidden = true;
    const facts = [`Read as ${FORMAT_NAMES[n.format] ?? n.format}.`];
    if (n.compactionTotalTokens > 0) facts.push(`Summary model tokens: ${num(n.compactionTotalTokens)} (${num(n.compactionInputTokens)} in + ${num(n.compactionOutputTokens)} out${n.usageEstimated ? ", estimated" : ""}).`);
    $("notice-facts").textContent = facts.join(" ");
    $("notice").hidden = false;

    const warnings = $("warnings");
    if (r.warnings.length) {
      warnings.replaceChildren(el("h3", {}, r.warnings.length === 1 ? "1 warning" : `${r.warnings.length} warnings`), el("ul", {}, r.warnings.map((w) => el("li", { dataset: { code: w.code } }, el("strong", {}, WARNING_TITLES[w.code] ?? w.code), ` (${w.code}): ${w.message}`))));
      warnings.hidden = false;
    } else warnings.hidden = true;

    $("actions").hidden = false;
    renderMeters();
    renderValidation();
    renderViews("after");
  }

  function renderValidation() {
    const box = $("validation");
    const line = (what, history) => {
      try {
        const { violations } = api.validate(history);
        if (violations.length === 0) return el("li", { class: "ok" }, `${what}: follows the provider rules.`);
        return el(
          "li",
          { class: "bad" },
          `${what}: breaks ${violations.length === 1 ? "1 provider rule" : `${violations.length} provider rules`}:`,
          el("ul", {}, violations.slice(0, 5).map((v) => el("li", {}, el("code", {}, v.code), ` ${v.message}`))),
          violations.length > 5 ? el("p", {}, `…and ${violations.length - 5} more.`) : "",
        );
      } catch (e) {
        return el("li", { class: "bad" }, `${what}: ${e?.message ?? e}`);
      }
    };
    if (!state.input || !state.beforeMeter) {
      box.hidden = true;
      return;
    }
    const items = [line("The original", state.input.value)];
    if (state.result) items.push(line("The result", state.result.request ?? state.result.messages));
    box.replaceChildren(el("h3", {}, "Provider check"), el("ul", {}, items));
    box.hidden = false;
  }

  function renderMeters() {
    drawMeter($("meter-before"), state.beforeMeter, "Before", "meter-before-h");
    drawMeter($("meter-after"), state.result ? state.afterMeter : null, "After", "meter-after-h");
  }

  function drawMeter(figure, m, title, id) {
    if (!m) {
      figure.hidden = true;
      figure.replaceChildren();
      return;
    }
    const win = m.contextWindow;
    const fill = Math.min(1, m.tokens / win);
    const thresholdAt = Math.min(1, m.threshold / win);
    const reservedFrom = Math.max(0, 1 - m.reservedOutputTokens / win);
    const over = m.tokens > win;
    const verdict = over ? "over the window" : m.shouldCompact ? "past the threshold: would auto-compact" : "under the threshold";
    const sourceWords = { option: "set in the options", model: `the window of the request's model`, default: "the default window" };
    const perMessage = m.perMessage ?? [];
    const max = Math.max(1, ...perMessage);
    const ranked = perMessage.length < 4 ? [] : perMessage.map((t, i) => [t, i]).filter(([t]) => t > 0).sort((a, b) => b[0] - a[0]).slice(0, 5);
    const heavy = new Set(ranked.map(([, i]) => i));
    const which = title === "Before" ? "before" : "after";
    figure.replaceChildren(
      el("figcaption", { id }, el("strong", {}, title), ` ${num(m.tokens)} of ${num(win)} tokens (${pct(m.tokens / win)}), ${verdict}`),
      el(
        "div",
        { class: `bar${over ? " over" : m.shouldCompact ? " hot" : ""}`, role: "meter", "aria-labelledby": id, "aria-valuemin": 0, "aria-valuemax": win, "aria-valuenow": Math.min(m.tokens, win), "aria-valuetext": `${num(m.tokens)} tokens of ${num(win)}; threshold ${num(m.threshold)}` },
        el("span", { class: "fill", style: `width:${(fill * 100).toFixed(2)}%` }),
        m.reservedOutputTokens > 0 ? el("span", { class: "reserved", style: `left:${(reservedFrom * 100).toFixed(2)}%;width:${((1 - reservedFrom) * 100).toFixed(2)}%`, title: "reserved for the answer" }) : "",
        el("span", { class: "threshold", style: `left:${(thresholdAt * 100).toFixed(2)}%`, title: `threshold ${num(m.threshold)}` }),
      ),
      el(
        "p",
        { class: "meter-facts" },
        `Auto-compact threshold ${num(m.threshold)} tokens; window ${num(win)} (${sourceWords[m.windowSource] ?? m.windowSource})`,
        m.reservedOutputTokens ? `; ${num(m.reservedOutputTokens)} reserved for the answer` : "",
        m.systemTokens ? `; system prompt held apart ${num(m.systemTokens)}` : "",
        m.toolsTokens ? `; tool definitions ${num(m.toolsTokens)}` : "",
        m.reported ? "; counted from the usage the provider reported" : "",
        ".",
      ),
      el(
        "div",
        { class: "weights", "aria-hidden": "true", title: "tokens per message, in order" },
        perMessage.map((t, i) => el("span", { class: heavy.has(i) ? "heavy" : "", style: `height:${Math.max(4, (t / max) * 100).toFixed(1)}%` })),
      ),
      ranked.length
        ? el(
            "div",
            { class: "heaviest" },
            el("p", {}, "Heaviest messages (tokens):"),
            el(
              "ol",
              {},
              ranked.map(([t, i]) => el("li", {}, el("button", { type: "button", class: "link", "aria-label": `Show message ${i}`, onclick: () => showMessage(which, i) }, `#${i}`), ` ${num(t)} (${pct(t / Math.max(1, m.tokens))})`)),
            ),
          )
        : "",
    );
    figure.hidden = false;
  }

  // ---- the conversation --------------------------------------------------------------------

  const tabs = { after: $("tab-after"), before: $("tab-before") };
  for (const [which, tab] of Object.entries(tabs)) {
    tab.addEventListener("click", () => renderViews(which));
    tab.addEventListener("keydown", (e) => {
      if (e.key === "ArrowRight" || e.key === "ArrowLeft" || e.key === "Home" || e.key === "End") {
        e.preventDefault();
        const next = which === "after" ? "before" : "after";
        if (next === "after" && !state.result) return;
        renderViews(next);
        tabs[next].focus();
      }
    });
  }

  function renderViews(which) {
    if (!state.input) return;
    if (which === "after" && !state.result) which = "before";
    state.view = which;
    for (const [k, tab] of Object.entries(tabs)) {
      tab.setAttribute("aria-selected", String(k === which));
      tab.tabIndex = k === which ? 0 : -1;
    }
    tabs.after.hidden = !state.result;
    tabs.after.textContent = state.result ? `Compacted (${state.result.messages.length})` : "Compacted";
    tabs.before.textContent = `Original (${messagesOf(state.input.value).messages.length})`;
    $("conversation").setAttribute("aria-labelledby", tabs[which].id);
    const box = $("conversation");
    if (which === "after") {
      const source = new Set(messagesOf(state.input.value).messages);
      drawConversation(box, state.result.request ?? state.result.messages, state.result.notice.format, state.afterMeter?.perMessage, (m) => source.has(m), "after");
    } else {
      drawConversation(box, state.input.value, state.format ?? "openai", state.beforeMeter?.perMessage, undefined, "before");
    }
    $("views").hidden = false;
  }

  function showMessage(which, index) {
    renderViews(which);
    const target = document.getElementById(`${which}-${index}`);
    if (target) {
      target.scrollIntoView({ block: "center" });
      target.classList.add("flash");
      target.focus({ preventScroll: true });
      setTimeout(() => target.classList.remove("flash"), 1500);
    }
  }

  const RENDER_LIMIT = 400;

  /**
   * Draws a history as bubbles. Each message has one element with `data-index`:
   * its bubble, or, for a message that only carries tool results, the first of
   * its results drawn under the calls they answer.
   */
  function drawConversation(box, historyValue, format, perMessage, isKept, which, limit = RENDER_LIMIT) {
    const { messages } = messagesOf(historyValue);
    const views = messages.map((m) => markParts(normalize(m, format)));
    const kinds = views.map((v, i) => (isKept ? messageKind(v, isKept(messages[i])) : undefined));
    const tokens = perMessage ?? [];
    // The heaviest stand out (when there are enough messages for it to mean something).
    const ranked = messages.length < 4 ? [] : tokens.map((t, i) => [t, i]).filter(([t]) => t > 0).sort((a, b) => b[0] - a[0]).slice(0, 5);
    const heavyRank = new Map(ranked.map(([, i], k) => [i, k + 1]));
    const maxTokens = Math.max(1, ...tokens);

    // Pair each result with the call it answers: the nearest earlier call with its id.
    const callsById = new Map();
    const attached = new Set(); // "i:k" of result parts drawn under their call
    views.forEach((v, i) => {
      v.parts.forEach((p, k) => {
        if (p.type === "call") {
          p.results = [];
          callsById.set(p.id, { part: p, index: i });
        } else if (p.type === "result") {
          const c = callsById.get(p.id);
          if (c && c.index <= i) {
            c.part.results.push({ part: p, index: i });
            attached.add(`${i}:${k}`);
          }
        }
      });
    });
    const folded = views.map((v, i) => v.parts.length > 0 && v.parts.every((p, k) => attached.has(`${i}:${k}`)));
    const representedBy = new Map(); // folded message index → already has its data-index element

    const meta = (i) => ({
      tokens: tokens[i],
      heavy: heavyRank.get(i),
      weight: tokens[i] !== undefined ? tokens[i] / maxTokens : undefined,
    });

    const resultCard = (r) => {
      const i = r.index;
      const first = folded[i] && !representedBy.has(i);
      if (first) representedBy.set(i, true);
      // A result's own kind (pruned, stub …); else kept with its message, or unchanged inside a message that changed.
      const kind = r.part.kind ?? (kinds[i] === "kept" ? "kept" : undefined);
      const attrs = { class: `result${kind ? ` kind-${kind}` : ""}${r.part.isError ? " error" : ""}`, dataset: { partKind: kind ?? (kinds[i] === undefined ? "original" : "unchanged") } };
      if (first) {
        Object.assign(attrs, { id: `${which}-${i}`, tabindex: "-1" });
        attrs.dataset.index = String(i);
        attrs.dataset.kind = kinds[i] ?? "original";
        attrs.dataset.role = "tool";
        if (heavyRank.has(i)) attrs.class += " heavy";
      }
      const m = meta(i);
      return el(
        "div",
        attrs,
        el(
          "div",
          { class: "result-head" },
          el("span", { class: "arrow", "aria-hidden": "true" }, "↳ "),
          `${r.part.isError ? "error result" : "result"} · #${i}`,
          m.tokens !== undefined && folded[i] ? el("span", { class: "tok" }, ` · ${num(m.tokens)} tokens`) : "",
          kind ? el("span", { class: `badge kind-${kind}` }, KIND_WORDS[kind] ?? kind) : "",
          first && m.heavy ? el("span", { class: "badge heavy" }, `heaviest #${m.heavy}`) : "",
        ),
        first && m.weight !== undefined ? el("div", { class: "weight", "aria-hidden": "true" }, el("span", { style: `width:${(m.weight * 100).toFixed(1)}%` })) : "",
        r.part.kind ? el("pre", { class: "body" }, r.part.text) : clipped(r.part.text, { lines: 8, chars: 600 }),
      );
    };

    const partNode = (p, i, k) => {
      switch (p.type) {
        case "text":
          // A part's own badge only where it differs from its message's (a marker merged into a user message).
          return p.kind
            ? el("div", { class: `text kind-${p.kind}`, dataset: { partKind: p.kind } }, p.kind !== kinds[i] ? el("span", { class: `badge kind-${p.kind}` }, KIND_WORDS[p.kind]) : "", clipped(p.text, { lines: 60, chars: 6000 }))
            : el("div", { class: "text" }, clipped(p.text, { lines: 30, chars: 2400 }));
        case "reasoning":
          return el("details", { class: "reasoning" }, el("summary", {}, p.signed ? "reasoning (signed, kept as is)" : "reasoning"), el("pre", { class: "body" }, p.text));
        case "call":
          return el(
            "div",
            { class: `call${p.kind ? ` kind-${p.kind}` : ""}` },
            el("div", { class: "call-head" }, el("strong", {}, p.name), " ", el("code", {}, p.id), p.kind ? el("span", { class: `badge kind-${p.kind}` }, KIND_WORDS[p.kind]) : ""),
            el("details", { class: "args" }, el("summary", {}, "arguments"), el("pre", { class: "body" }, p.args)),
            p.results.length ? p.results.map(resultCard) : el("div", { class: "result missing" }, p.running ? "↳ still running (no result yet)" : "↳ no result in this history"),
          );
        case "result":
          if (attached.has(`${i}:${k}`)) return "";
          return el("div", { class: `result orphan${p.kind ? ` kind-${p.kind}` : ""}`, dataset: { partKind: p.kind ?? "original" } }, el("div", { class: "result-head" }, `result for ${p.id || "(no id)"}: no call before it`, p.kind ? el("span", { class: `badge kind-${p.kind}` }, KIND_WORDS[p.kind]) : ""), clipped(p.text, { lines: 8, chars: 600 }));
        case "media":
          return el("p", { class: "chip" }, `[${p.label}]`);
        default:
          return el("details", { class: "opaque" }, el("summary", {}, p.label), el("pre", { class: "body" }, p.text));
      }
    };

    const nodes = [];
    const system = heldApartSystem(historyValue);
    if (system) {
      nodes.push(el("article", { class: "msg role-system held", dataset: { held: "system" } }, el("header", {}, el("span", { class: "role" }, "system prompt"), el("span", { class: "idx" }, "held apart in the request")), el("div", { class: "text" }, clipped(system, { lines: 12, chars: 1200 }))));
    }
    const shown = Math.min(messages.length, limit);
    for (let i = 0; i < shown; i++) {
      if (folded[i]) continue; // drawn with its calls
      const v = views[i];
      const kind = kinds[i];
      const m = meta(i);
      const hasResults = v.parts.some((p, k) => p.type === "result" && attached.has(`${i}:${k}`));
      const flagged = which === "before" && state.flagged === i;
      nodes.push(
        el(
          "article",
          {
            class: `msg role-${v.role}${kind ? ` kind-${kind}` : ""}${m.heavy ? " heavy" : ""}${flagged ? " flagged" : ""}`,
            id: `${which}-${i}`,
            tabindex: "-1",
            "aria-label": `message ${i}, ${v.label ?? v.role}${kind ? `, ${kind}` : ""}`,
            dataset: { index: String(i), kind: kind ?? "original", role: v.role },
          },
          el(
            "header",
            {},
            el("span", { class: "role" }, v.label ?? v.role),
            el("span", { class: "idx" }, `#${i}`),
            kind ? el("span", { class: `badge kind-${kind}` }, KIND_WORDS[kind]) : "",
            m.tokens !== undefined ? el("span", { class: "tok" }, `${num(m.tokens)} tokens`) : "",
            m.heavy ? el("span", { class: "badge heavy" }, `heaviest #${m.heavy}`) : "",
            flagged ? el("span", { class: "badge flag" }, "named in the error") : "",
          ),
          m.weight !== undefined ? el("div", { class: "weight", "aria-hidden": "true" }, el("span", { style: `width:${(m.weight * 100).toFixed(1)}%` })) : "",
          v.parts.length === 0 ? el("p", { class: "chip" }, "(empty)") : v.parts.map((p, k) => partNode(p, i, k)),
          hasResults ? el("p", { class: "chip" }, "Its tool results are shown under the calls they answer.") : "",
        ),
      );
    }
    if (messages.length > shown) {
      nodes.push(el("p", { class: "chip" }, `${num(messages.length - shown)} more messages are not drawn. `, el("button", { type: "button", class: "quiet", onclick: () => drawConversation(box, historyValue, format, perMessage, isKept, which, Infinity) }, "Draw them all")));
    }
    box.replaceChildren(...nodes);
    box.dataset.view = which;
  }

  // ---- download and copy ------------------------------------------------------------------

  function resultText() {
    const r = state.result;
    const value = r.request ?? r.messages;
    if (state.input.kind === "jsonl" && Array.isArray(value)) return value.map((m) => JSON.stringify(m)).join("\n") + "\n";
    return JSON.stringify(value, null, 2) + "\n";
  }
  $("download").addEventListener("click", () => {
    if (!state.result) return;
    const jsonl = state.input.kind === "jsonl";
    const blob = new Blob([resultText()], { type: jsonl ? "application/x-ndjson" : "application/json" });
    const a = el("a", { href: URL.createObjectURL(blob), download: `${state.name ?? "conversation"}.compacted.${jsonl ? "jsonl" : "json"}` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  });
  $("copy").addEventListener("click", async () => {
    if (!state.result) return;
    const status = $("copy-status");
    const text = resultText();
    try {
      await navigator.clipboard.writeText(text);
      status.textContent = `Copied ${num(text.length)} characters.`;
    } catch {
      // No clipboard permission (or an insecure origin): select the text for a manual copy.
      const area = el("textarea", { class: "copy-fallback", "aria-label": "The result as JSON", readonly: true });
      area.value = text;
      status.replaceChildren("The browser did not allow copying; the JSON is selected below: press Ctrl+C.", area);
      area.focus();
      area.select();
    }
  });

  // ---- ready ------------------------------------------------------------------------------

  modeChanged();
  setOptions(DEFAULTS);
  $("load-status").textContent = "Ready: the compaction module is loaded in this page.";
  $("load-status").classList.add("ready");
  document.body.dataset.ready = "true";
  document.body.dataset.input = "0";
  if (history.value.trim()) inputChanged();
  else $("input-status").textContent = "Paste a conversation, drop a file on the box, pick one, or choose a sample.";
  updateRunButton();
}
