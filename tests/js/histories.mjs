// Hand-written histories in the newer formats (OpenAI Responses items, Vercel AI
// SDK ModelMessages and UIMessages, Gemini contents), long enough that a small
// context window compacts them, each with tool calls and results and the opaque
// fields their providers need back byte for byte (Responses `encrypted_content`,
// Gemini `thoughtSignature`, AI SDK reasoning signatures). Every call of round
// `i` carries `step: i` in its arguments, and every opaque value names its round.

/** A long opaque token, different per round (what a provider would send). */
export const opaque = (tag, i) => `${tag}${i}_` + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0567".repeat(8) + `_${i}`;

const output = (i) => `result of step ${i}: ` + "lorem ipsum dolor sit amet ".repeat(40);

/** OpenAI Responses `input` items: a reasoning item (with encrypted_content) before each function_call. */
export function responsesItems(rounds = 10) {
  const items = [
    { type: "message", role: "developer", content: "You are a travel agent. Use the tools." },
    { type: "message", role: "user", content: [{ type: "input_text", text: "Plan a trip to Paris: flights, hotels and museums in src/trip/plan.md." }] },
  ];
  for (let i = 0; i < rounds; i++) {
    items.push(
      { type: "reasoning", id: `rs_${i}`, summary: [{ type: "summary_text", text: `Step ${i}: I need to search.` }], encrypted_content: opaque("gAAAAB", i) },
      { type: "function_call", id: `fc_${i}`, call_id: `call_${i}`, name: "search", arguments: JSON.stringify({ query: `hotels near museum ${i}`, step: i }), status: "completed" },
      { type: "function_call_output", call_id: `call_${i}`, output: output(i) },
      { type: "message", role: "assistant", id: `msg_${i}`, status: "completed", content: [{ type: "output_text", text: `Step ${i} done: found three options.`, annotations: [] }] },
      { role: "user", content: `Good. Now step ${i + 1}, please.` },
    );
  }
  return items;
}

/** Vercel AI SDK ModelMessages: assistant tool-call parts answered by tool messages. */
export function aiSdkMessages(rounds = 10) {
  const messages = [
    { role: "system", content: "You are a coding agent." },
    { role: "user", content: "Fix the failing test in src/app.ts." },
  ];
  for (let i = 0; i < rounds; i++) {
    messages.push(
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: `Round ${i}: read the next file.`, providerOptions: { anthropic: { signature: opaque("sig", i) } } },
          { type: "text", text: `Reading src/f${i}.ts.` },
          { type: "tool-call", toolCallId: `tc_${i}`, toolName: "readFile", input: { path: `src/f${i}.ts`, step: i } },
        ],
      },
      { role: "tool", content: [{ type: "tool-result", toolCallId: `tc_${i}`, toolName: "readFile", output: { type: "text", value: output(i) } }] },
      { role: "assistant", content: `File ${i} looks fine.` },
      { role: "user", content: `Go on with file ${i + 1}.` },
    );
  }
  return messages;
}

/** The tool part of round `i` of `uiMessages`: four states in turn. */
function uiToolPart(i) {
  const input = { city: `City ${i}`, step: i };
  switch (i % 4) {
    case 0:
      return { type: "tool-getWeather", toolCallId: `tc_${i}`, state: "output-available", input, output: { report: output(i) } };
    case 1:
      return { type: "tool-getWeather", toolCallId: `tc_${i}`, state: "output-error", input, errorText: `station ${i} is down` };
    case 2:
      return { type: "dynamic-tool", toolName: "lookupForecast", toolCallId: `tc_${i}`, state: "output-available", input, output: output(i) };
    default:
      return { type: "tool-getWeather", toolCallId: `tc_${i}`, state: "output-denied", input, approval: { id: `ap_${i}`, approved: false, reason: "not that city" } };
  }
}

/** Vercel AI SDK UIMessages: tool parts (`tool-<name>`, `dynamic-tool`) in several states. */
export function uiMessages(rounds = 10) {
  const messages = [
    { id: "sys", role: "system", parts: [{ type: "text", text: "You are a weather assistant." }] },
    { id: "u_first", role: "user", parts: [{ type: "text", text: "What is the weather in my cities?" }] },
  ];
  for (let i = 0; i < rounds; i++) {
    messages.push(
      {
        id: `a_${i}`,
        role: "assistant",
        parts: [
          { type: "step-start" },
          { type: "reasoning", text: `Checking city ${i}.`, state: "done", providerMetadata: { anthropic: { signature: opaque("sig", i) } } },
          uiToolPart(i),
          { type: "text", text: `City ${i} checked.`, state: "done" },
        ],
      },
      { id: `u_${i}`, role: "user", parts: [{ type: "text", text: `And city ${i + 1}?` }] },
    );
  }
  return messages;
}

/** Gemini contents: model turns with a thoughtSignature on their functionCall part, answered by functionResponse turns. */
export function geminiContents(rounds = 10) {
  const contents = [{ role: "user", parts: [{ text: "Plan my week: check the weather for each day." }] }];
  for (let i = 0; i < rounds; i++) {
    contents.push(
      {
        role: "model",
        parts: [
          { text: `Day ${i}: I should check the weather.`, thought: true },
          { functionCall: { name: "get_weather", args: { day: `day ${i}`, step: i } }, thoughtSignature: opaque("CiQB", i) },
        ],
      },
      { role: "user", parts: [{ functionResponse: { name: "get_weather", response: { forecast: output(i) } } }] },
      { role: "model", parts: [{ text: `Day ${i} will be sunny.` }] },
      { role: "user", parts: [{ text: `Thanks. Day ${i + 1}?` }] },
    );
  }
  return contents;
}

/** Each format: its generator, the request object around it, and the key it uses. */
export const FORMATS = {
  "openai-responses": {
    key: "input",
    history: responsesItems,
    request: (items) => ({ model: "gpt-5", instructions: "Be brief.", input: items, store: false, include: ["reasoning.encrypted_content"] }),
  },
  "ai-sdk": {
    key: "messages",
    history: aiSdkMessages,
    request: (messages) => ({ model: "anthropic/claude-sonnet-4.5", system: "Be brief.", messages, maxOutputTokens: 1024 }),
  },
  "ai-sdk-ui": {
    key: "messages",
    history: uiMessages,
    request: (messages) => ({ id: "chat_1", messages, trigger: "submit-message" }),
  },
  gemini: {
    key: "contents",
    history: geminiContents,
    request: (contents) => ({ systemInstruction: { parts: [{ text: "Be brief." }] }, contents, generationConfig: { temperature: 0 } }),
  },
};
