/**
 * Gemini thought signatures never split an answer: for the same upstream answer, streamed and
 * non-streamed, every format gives the same answer with the official client, in order (reasoning,
 * one text, the function calls, then the signature carriers), and the next turn sends every
 * signature back to Gemini byte-identical.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import { type ConformanceGateway, startConformanceGateway } from "../helpers/conformance-gateway.js";
import { buildGeminiChunk, fakeGoogleReply } from "../helpers/fake-google-upstream.js";

let gateway: ConformanceGateway;
before(async () => {
  gateway = await startConformanceGateway();
});
after(async () => {
  await gateway?.close();
});

const SIG_TEXT = "EpAICo0IAb4+9vuku3oD/signed+text==";
const SIG_CALL = "Es8FCswFAXLI2nxFGW9o/signed+call==";

interface Answer {
  name: string;
  /** Streamed chunks (each one `data:` frame). */
  chunks: Array<Array<Record<string, unknown>>>;
  /** The same answer as one non-streamed body. */
  body: Array<Record<string, unknown>>;
  /** The model turn the next request must carry. */
  replayed: Array<Record<string, unknown>>;
  calls: number;
}

const ANSWERS: Answer[] = [
  {
    name: "a signature on a middle text chunk",
    chunks: [
      [{ text: "Hello from the bar mock" }],
      [{ text: ".", thoughtSignature: SIG_TEXT }],
      [{ text: " Bye." }],
    ],
    body: [{ text: "Hello from the bar mock. Bye.", thoughtSignature: SIG_TEXT }],
    replayed: [{ text: "Hello from the bar mock. Bye.", thoughtSignature: SIG_TEXT }],
    calls: 0,
  },
  {
    name: "thoughts, text, two calls, the first one signed",
    chunks: [
      [{ text: "Plan the lookups.", thought: true }],
      [{ text: "Checking both." }],
      [{ functionCall: { name: "get_weather", args: { city: "Paris" } }, thoughtSignature: SIG_CALL }],
      [{ functionCall: { name: "get_weather", args: { city: "Rome" } } }],
    ],
    body: [
      { text: "Plan the lookups.", thought: true },
      { text: "Checking both." },
      { functionCall: { name: "get_weather", args: { city: "Paris" } }, thoughtSignature: SIG_CALL },
      { functionCall: { name: "get_weather", args: { city: "Rome" } } },
    ],
    replayed: [
      { text: "Checking both." },
      { functionCall: { name: "get_weather", args: { city: "Paris" } }, thoughtSignature: SIG_CALL },
      { functionCall: { name: "get_weather", args: { city: "Rome" } } },
    ],
    calls: 2,
  },
];

const TOOLS_OPENAI_CHAT = [
  { type: "function" as const, function: { name: "get_weather", parameters: { type: "object" } } },
];

function serve(answer: Answer, stream: boolean): void {
  const finish = "STOP";
  const upstream = gateway.upstreams.google;
  if (stream) {
    upstream.serve(
      fakeGoogleReply.sse(
        answer.chunks.map((parts, index) =>
          buildGeminiChunk(parts, index === answer.chunks.length - 1 ? { finishReason: finish } : {}),
        ),
      ),
    );
  } else {
    upstream.serve(fakeGoogleReply.json(buildGeminiChunk(answer.body, { finishReason: finish })));
  }
}

/** The model turn of the last request Gemini received. */
function lastModelTurn(): unknown {
  const request = gateway.upstreams.google.requests.at(-1)!;
  const turns = request.body.contents as Array<{ role: string; parts: unknown[] }>;
  return turns.filter((turn) => turn.role === "model").at(-1)?.parts;
}

const model = () => gateway.upstreams.google.model;

for (const answer of ANSWERS) {
  test(`responses: ${answer.name}: streamed = non-streamed, in order, signatures back byte-identical`, async () => {
    const params = {
      model: model(),
      input: "Weather in Paris and Rome?",
      tools: [
        { type: "function" as const, name: "get_weather", parameters: { type: "object" }, strict: false },
      ],
    };
    serve(answer, false);
    const plain = await gateway.openai.responses.create(params);
    serve(answer, true);
    const streamed = await gateway.openai.responses.stream(params).finalResponse();
    const shape = (output: OpenAI.Responses.ResponseOutputItem[]) =>
      output.map((item) =>
        item.type === "message"
          ? ["message", item.content.map((part) => (part.type === "output_text" ? part.text : part.type))]
          : item.type === "function_call"
            ? ["function_call", item.name, item.arguments]
            : item.type === "reasoning"
              ? ["reasoning", item.summary.map((part) => part.text)]
              : [item.type],
      );
    assert.deepEqual(shape(streamed.output), shape(plain.output));
    const expected =
      answer.calls === 0
        ? [
            ["message", ["Hello from the bar mock. Bye."]],
            ["reasoning", []],
          ]
        : [
            ["reasoning", ["Plan the lookups."]],
            ["message", ["Checking both."]],
            ["function_call", "get_weather", '{"city":"Paris"}'],
            ["function_call", "get_weather", '{"city":"Rome"}'],
            ["reasoning", []],
          ];
    assert.deepEqual(shape(plain.output), expected);
    for (const response of [plain, streamed]) {
      serve({ ...answer, chunks: [[{ text: "ok" }]], body: [{ text: "ok" }] }, false);
      const outputs = response.output.flatMap((item) =>
        item.type === "function_call"
          ? [{ type: "function_call_output" as const, call_id: item.call_id, output: "18C" }]
          : [],
      );
      await gateway.openai.responses.create({
        ...params,
        input: [{ role: "user", content: "Weather in Paris and Rome?" }, ...response.output, ...outputs],
      } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
      assert.deepEqual(lastModelTurn(), answer.replayed);
    }
  });

  test(`messages: ${answer.name}: streamed = non-streamed, in order, signatures back byte-identical`, async () => {
    const params = {
      model: model(),
      max_tokens: 1000,
      messages: [{ role: "user" as const, content: "Weather in Paris and Rome?" }],
      tools: [{ name: "get_weather", input_schema: { type: "object" as const } }],
    };
    serve(answer, false);
    const plain = await gateway.anthropic.messages.create(params);
    serve(answer, true);
    const streamed = await gateway.anthropic.messages.stream(params).finalMessage();
    const shape = (content: Anthropic.ContentBlock[]) =>
      content.map((block) =>
        block.type === "text"
          ? ["text", block.text]
          : block.type === "tool_use"
            ? ["tool_use", block.name, block.input]
            : block.type === "thinking"
              ? ["thinking", block.thinking]
              : [block.type],
      );
    assert.deepEqual(shape(streamed.content), shape(plain.content));
    const expected =
      answer.calls === 0
        ? [
            ["text", "Hello from the bar mock. Bye."],
            ["thinking", ""],
          ]
        : [
            ["thinking", "Plan the lookups."],
            ["text", "Checking both."],
            ["tool_use", "get_weather", { city: "Paris" }],
            ["tool_use", "get_weather", { city: "Rome" }],
            ["thinking", ""],
          ];
    assert.deepEqual(shape(plain.content), expected);
    for (const message of [plain, streamed]) {
      serve({ ...answer, chunks: [[{ text: "ok" }]], body: [{ text: "ok" }] }, false);
      const results = message.content.flatMap((block) =>
        block.type === "tool_use"
          ? [{ type: "tool_result" as const, tool_use_id: block.id, content: "18C" }]
          : [],
      );
      await gateway.anthropic.messages.create({
        ...params,
        messages: [
          ...params.messages,
          { role: "assistant", content: message.content as Anthropic.ContentBlockParam[] },
          { role: "user", content: results.length > 0 ? results : "Thanks" },
        ],
      });
      assert.deepEqual(lastModelTurn(), answer.replayed);
    }
  });

  test(`chat completions: ${answer.name}: streamed = non-streamed, signatures back byte-identical`, async () => {
    const params = {
      model: model(),
      messages: [{ role: "user" as const, content: "Weather in Paris and Rome?" }],
      tools: TOOLS_OPENAI_CHAT,
    };
    serve(answer, false);
    const plain = (await gateway.openai.chat.completions.create(params)).choices[0].message;
    serve(answer, true);
    let content = "";
    const calls: Array<{ name: string; arguments: string }> = [];
    let details: unknown[] = [];
    for await (const chunk of await gateway.openai.chat.completions.create({ ...params, stream: true })) {
      const delta = chunk.choices[0]?.delta as
        | (OpenAI.Chat.ChatCompletionChunk.Choice.Delta & { reasoning_details?: unknown[] })
        | undefined;
      content += delta?.content ?? "";
      for (const call of delta?.tool_calls ?? []) {
        if (call.function?.name) calls.push({ name: call.function.name, arguments: "" });
        calls[call.index]!.arguments += call.function?.arguments ?? "";
      }
      details = [...details, ...(delta?.reasoning_details ?? [])];
    }
    assert.equal(content, plain.content);
    assert.deepEqual(
      calls,
      (plain.tool_calls ?? []).map((call) => ({
        name: call.type === "function" ? call.function.name : "",
        arguments: call.type === "function" ? call.function.arguments : "",
      })),
    );
    const withoutIds = (list: unknown[]) =>
      list.map((detail) => ({ ...(detail as object), tool_call_id: undefined }));
    const plainDetails = (plain as unknown as { reasoning_details: unknown[] }).reasoning_details;
    assert.deepEqual(withoutIds(details), withoutIds(plainDetails));
    serve({ ...answer, chunks: [[{ text: "ok" }]], body: [{ text: "ok" }] }, false);
    await gateway.openai.chat.completions.create({
      ...params,
      messages: [
        ...params.messages,
        plain as OpenAI.Chat.ChatCompletionAssistantMessageParam,
        ...(plain.tool_calls ?? []).map((call) => ({
          role: "tool" as const,
          tool_call_id: call.id,
          content: "18C",
        })),
        ...(answer.calls === 0 ? [{ role: "user" as const, content: "Thanks" }] : []),
      ],
    });
    const sent = JSON.stringify(lastModelTurn());
    for (const signature of answer.calls === 0 ? [SIG_TEXT] : [SIG_CALL]) {
      assert.ok(sent.includes(JSON.stringify(signature)), `${signature} goes back byte-identical`);
    }
  });
}
