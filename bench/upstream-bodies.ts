/**
 * The bench upstream's answers, built once: realistic Chat Completions and Messages bodies (the
 * shapes and sizes OpenAI and Anthropic send for a short answer), so the gateway parses, translates
 * and re-encodes what it would in production while the upstream itself spends almost nothing.
 */

/** A short answer, split into the ~4-character pieces a model streams as tokens. */
const ANSWER =
  "Sure. A gateway sits between your application and the model providers: it checks the key, " +
  "picks a route, translates the request, streams the answer back and records what it cost, " +
  "so every team sees one API and one bill.";

export function splitIntoTokens(text: string, count: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / count));
  const tokens: string[] = [];
  for (let offset = 0; offset < text.length && tokens.length < count; offset += size) {
    tokens.push(text.slice(offset, offset + size));
  }
  return tokens;
}

const CHAT_ID = "chatcmpl-BenchAbCdEfGhIjKlMnOpQrStUvWxYz01";
const MESSAGE_ID = "msg_01BenchAbCdEfGhIjKlMnOpQr";
const CREATED = 1_763_000_000;

export function buildChatCompletionBody(model: string, tokens: number): string {
  return JSON.stringify({
    id: CHAT_ID,
    object: "chat.completion",
    created: CREATED,
    model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: ANSWER, refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: "stop",
      },
    ],
    usage: {
      prompt_tokens: 62,
      completion_tokens: tokens,
      total_tokens: 62 + tokens,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: 0,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    },
    service_tier: "default",
    system_fingerprint: "fp_bench0001",
  });
}

function chatChunk(model: string, delta: object, finishReason: string | null, usage: object | null): string {
  return `data: ${JSON.stringify({
    id: CHAT_ID,
    object: "chat.completion.chunk",
    created: CREATED,
    model,
    service_tier: "default",
    system_fingerprint: "fp_bench0001",
    choices: usage ? [] : [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    usage,
  })}\n\n`;
}

/** SSE frames of a streamed chat completion: role, one per token, finish, usage, [DONE]. */
export function buildChatStreamFrames(model: string, tokenCount: number): string[] {
  const tokens = splitIntoTokens(ANSWER, tokenCount);
  return [
    chatChunk(model, { role: "assistant", content: "", refusal: null }, null, null),
    ...tokens.map((token) => chatChunk(model, { content: token }, null, null)),
    chatChunk(model, {}, "stop", null),
    chatChunk(model, {}, null, {
      prompt_tokens: 62,
      completion_tokens: tokens.length,
      total_tokens: 62 + tokens.length,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
    }),
    "data: [DONE]\n\n",
  ];
}

export function buildMessageBody(model: string, tokens: number): string {
  return JSON.stringify({
    id: MESSAGE_ID,
    type: "message",
    role: "assistant",
    model,
    content: [{ type: "text", text: ANSWER }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: {
      input_tokens: 62,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: tokens,
      service_tier: "standard",
    },
  });
}

function messageEvent(type: string, data: object): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

/** SSE frames of a streamed Messages answer, in Anthropic's event order. */
export function buildMessageStreamFrames(model: string, tokenCount: number): string[] {
  const tokens = splitIntoTokens(ANSWER, tokenCount);
  return [
    messageEvent("message_start", {
      message: {
        id: MESSAGE_ID,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: 62,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: 1,
          service_tier: "standard",
        },
      },
    }),
    messageEvent("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
    messageEvent("ping", {}),
    ...tokens.map((token) =>
      messageEvent("content_block_delta", { index: 0, delta: { type: "text_delta", text: token } }),
    ),
    messageEvent("content_block_stop", { index: 0 }),
    messageEvent("message_delta", {
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: tokens.length },
    }),
    messageEvent("message_stop", {}),
  ];
}
