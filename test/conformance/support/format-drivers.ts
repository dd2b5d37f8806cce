/**
 * The three ingress formats, each driven through its official client exactly as an application
 * would: Chat Completions and Responses with `openai` (`create`, and the `.stream()` helpers whose
 * accumulators are the strictest consumers of our streams), Messages with `@anthropic-ai/sdk`
 * (`messages.create`, `messages.stream().finalMessage()`).
 *
 * A driver turns one provider-neutral {@link TurnRequest} into the format's request, sends it, and
 * reduces what the SDK returned to a {@link TurnOutcome}: text, reasoning text, tool calls, the
 * format's own finish value and usage fields, and the assistant turn in the format's own shape so
 * the next turn can send it back unchanged (the reasoning round trip). Errors are caught and
 * returned with whatever text arrived before them.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";

export type FormatId = "chat" | "responses" | "messages";
export const FORMAT_IDS: readonly FormatId[] = ["chat", "responses", "messages"];

/** What every format is asked, format-neutral. */
export interface TurnRequest {
  model: string;
  system?: string;
  text: string;
  images?: Array<{ mediaType: string; data: string } | { url: string }>;
  tools?: Array<{ name: string; description: string; parameters: Record<string, unknown> }>;
  jsonSchema?: { name: string; schema: Record<string, unknown> };
  maxTokens?: number;
  reasoning?: boolean;
  /** Turn 2 of a round trip: the turn-1 outcome to send back, and the result text of each tool call. */
  previous?: { outcome: TurnOutcome; toolResult: string };
}

export interface ToolCallOutcome {
  id: string;
  name: string;
  /** Chat/Responses: the arguments string as received; Messages: `JSON.stringify(input)`. */
  arguments: string;
}

export interface TurnOutcome {
  text: string;
  reasoningText: string;
  toolCalls: ToolCallOutcome[];
  /** Chat `finish_reason`; Responses `completed` or `incomplete:<reason>`; Messages `stop_reason`. */
  finish?: string;
  /** The format's usage fields, see {@link projectUsage}. */
  usage?: Record<string, number | undefined>;
  /** The assistant turn in the format's own request shape, for sending it back. */
  assistantTurn?: unknown;
  /** The SDK's final object (chat completion, response, message). */
  final?: unknown;
  /** Thrown by the SDK (HTTP error, or in-band stream error). */
  error?: unknown;
  /** Streams: the SDK-level events (chunks, response events, message events), in order. */
  events: unknown[];
}

export interface Clients {
  openai: OpenAI;
  anthropic: Anthropic;
}

export interface FormatDriver {
  id: FormatId;
  send(clients: Clients, request: TurnRequest, stream: boolean): Promise<TurnOutcome>;
}

export const DEFAULT_MESSAGES_MAX_TOKENS = 4096;
/** Messages-format thinking budget of reasoning turns (Anthropic's minimum). */
export const MESSAGES_THINKING_BUDGET = 1024;

// ---------------------------------------------------------------------------------------------
// Chat Completions

function chatParams(request: TurnRequest): OpenAI.ChatCompletionCreateParamsNonStreaming {
  const messages: OpenAI.ChatCompletionMessageParam[] = [];
  if (request.system !== undefined) messages.push({ role: "system", content: request.system });
  messages.push({
    role: "user",
    content:
      request.images === undefined
        ? request.text
        : [
            { type: "text", text: request.text },
            ...request.images.map(
              (image): OpenAI.ChatCompletionContentPartImage => ({
                type: "image_url",
                image_url: {
                  url: "url" in image ? image.url : `data:${image.mediaType};base64,${image.data}`,
                },
              }),
            ),
          ],
  });
  if (request.previous !== undefined) {
    messages.push(request.previous.outcome.assistantTurn as OpenAI.ChatCompletionAssistantMessageParam);
    for (const call of request.previous.outcome.toolCalls) {
      messages.push({ role: "tool", tool_call_id: call.id, content: request.previous.toolResult });
    }
  }
  return {
    model: request.model,
    messages,
    ...(request.tools === undefined
      ? {}
      : {
          tools: request.tools.map((tool) => ({
            type: "function" as const,
            function: { name: tool.name, description: tool.description, parameters: tool.parameters },
          })),
        }),
    ...(request.jsonSchema === undefined
      ? {}
      : {
          response_format: {
            type: "json_schema" as const,
            json_schema: { name: request.jsonSchema.name, schema: request.jsonSchema.schema, strict: true },
          },
        }),
    ...(request.maxTokens === undefined ? {} : { max_completion_tokens: request.maxTokens }),
    ...(request.reasoning ? { reasoning_effort: "low" as const } : {}),
  };
}

interface ChatMessageExtras {
  reasoning?: string;
  reasoning_details?: unknown[];
}

const chatDriver: FormatDriver = {
  id: "chat",
  async send({ openai }, request, stream) {
    const params = chatParams(request);
    const events: unknown[] = [];
    if (!stream) {
      try {
        const completion = await openai.chat.completions.create(params);
        const message = completion.choices[0].message as OpenAI.ChatCompletionMessage & ChatMessageExtras;
        return {
          text: message.content ?? "",
          reasoningText: message.reasoning ?? "",
          toolCalls: readChatToolCalls(message.tool_calls),
          finish: completion.choices[0].finish_reason,
          usage: projectUsage("chat", completion.usage),
          assistantTurn: message,
          final: completion,
          events,
        };
      } catch (error) {
        return { text: "", reasoningText: "", toolCalls: [], error, events };
      }
    }
    let text = "";
    let reasoningText = "";
    try {
      const runner = openai.chat.completions.stream({ ...params, stream: true });
      for await (const chunk of runner) {
        events.push(chunk);
        const delta = chunk.choices[0]?.delta as
          | (OpenAI.ChatCompletionChunk.Choice.Delta & ChatMessageExtras)
          | undefined;
        text += delta?.content ?? "";
        reasoningText += delta?.reasoning ?? "";
      }
      const completion = await runner.finalChatCompletion();
      const message = completion.choices[0].message as OpenAI.ChatCompletionMessage & ChatMessageExtras;
      // The SDK's accumulator overwrites non-standard delta fields (`reasoning`) instead of appending
      // them; an application keeps the streamed reasoning itself and sends it back with the message.
      const assistantTurn = { ...message, ...(reasoningText === "" ? {} : { reasoning: reasoningText }) };
      return {
        text: message.content ?? "",
        reasoningText,
        toolCalls: readChatToolCalls(message.tool_calls),
        finish: completion.choices[0].finish_reason,
        usage: projectUsage("chat", completion.usage),
        assistantTurn,
        final: completion,
        events,
      };
    } catch (error) {
      return { text, reasoningText, toolCalls: [], error, events };
    }
  },
};

function readChatToolCalls(calls: OpenAI.ChatCompletionMessageToolCall[] | undefined): ToolCallOutcome[] {
  return (calls ?? []).map((call) => {
    if (call.type !== "function") throw new Error(`unexpected tool call type ${call.type}`);
    return { id: call.id, name: call.function.name, arguments: call.function.arguments };
  });
}

// ---------------------------------------------------------------------------------------------
// Responses

function responsesParams(request: TurnRequest): OpenAI.Responses.ResponseCreateParamsNonStreaming {
  const input: OpenAI.Responses.ResponseInputItem[] = [
    {
      role: "user",
      content: [
        { type: "input_text", text: request.text },
        ...(request.images ?? []).map(
          (image): OpenAI.Responses.ResponseInputImage => ({
            type: "input_image",
            detail: "auto",
            image_url: "url" in image ? image.url : `data:${image.mediaType};base64,${image.data}`,
          }),
        ),
      ],
    },
  ];
  if (request.previous !== undefined) {
    input.push(...(request.previous.outcome.assistantTurn as OpenAI.Responses.ResponseInputItem[]));
    for (const call of request.previous.outcome.toolCalls) {
      input.push({ type: "function_call_output", call_id: call.id, output: request.previous.toolResult });
    }
  }
  return {
    model: request.model,
    input,
    store: false,
    ...(request.system === undefined ? {} : { instructions: request.system }),
    ...(request.tools === undefined
      ? {}
      : {
          tools: request.tools.map((tool) => ({
            type: "function" as const,
            name: tool.name,
            description: tool.description,
            parameters: tool.parameters,
            strict: false,
          })),
        }),
    ...(request.jsonSchema === undefined
      ? {}
      : {
          text: {
            format: {
              type: "json_schema" as const,
              name: request.jsonSchema.name,
              schema: request.jsonSchema.schema,
              strict: true,
            },
          },
        }),
    ...(request.maxTokens === undefined ? {} : { max_output_tokens: request.maxTokens }),
    ...(request.reasoning
      ? {
          reasoning: { effort: "low" as const, summary: "auto" as const },
          include: ["reasoning.encrypted_content"],
        }
      : {}),
  };
}

function readResponse(response: OpenAI.Responses.Response): Omit<TurnOutcome, "events"> {
  const toolCalls: ToolCallOutcome[] = [];
  let reasoningText = "";
  let text = "";
  for (const item of response.output) {
    if (item.type === "function_call")
      toolCalls.push({ id: item.call_id, name: item.name, arguments: item.arguments });
    else if (item.type === "reasoning") reasoningText += item.summary.map((part) => part.text).join("");
    else if (item.type === "message") {
      for (const part of item.content) if (part.type === "output_text") text += part.text;
    }
  }
  return {
    text,
    reasoningText,
    toolCalls,
    finish:
      response.status === "incomplete"
        ? `incomplete:${response.incomplete_details?.reason}`
        : String(response.status),
    usage: projectUsage("responses", response.usage),
    assistantTurn: response.output,
    final: response,
  };
}

const responsesDriver: FormatDriver = {
  id: "responses",
  async send({ openai }, request, stream) {
    const params = responsesParams(request);
    const events: unknown[] = [];
    if (!stream) {
      try {
        return { ...readResponse(await openai.responses.create(params)), events };
      } catch (error) {
        return { text: "", reasoningText: "", toolCalls: [], error, events };
      }
    }
    let text = "";
    try {
      const runner = openai.responses.stream({ ...params, stream: true });
      for await (const event of runner) {
        events.push(event);
        if (event.type === "response.output_text.delta") text += event.delta;
      }
      return { ...readResponse(await runner.finalResponse()), events };
    } catch (error) {
      return { text, reasoningText: "", toolCalls: [], error, events };
    }
  },
};

// ---------------------------------------------------------------------------------------------
// Messages

function messagesParams(request: TurnRequest): Anthropic.MessageCreateParamsNonStreaming {
  const messages: Anthropic.MessageParam[] = [
    {
      role: "user",
      content: [
        { type: "text", text: request.text },
        ...(request.images ?? []).map(
          (image): Anthropic.ImageBlockParam => ({
            type: "image",
            source:
              "url" in image
                ? { type: "url", url: image.url }
                : {
                    type: "base64",
                    media_type: image.mediaType as Anthropic.Base64ImageSource["media_type"],
                    data: image.data,
                  },
          }),
        ),
      ],
    },
  ];
  if (request.previous !== undefined) {
    messages.push({
      role: "assistant",
      content: request.previous.outcome.assistantTurn as Anthropic.ContentBlockParam[],
    });
    messages.push({
      role: "user",
      content: request.previous.outcome.toolCalls.map(
        (call): Anthropic.ToolResultBlockParam => ({
          type: "tool_result",
          tool_use_id: call.id,
          content: request.previous!.toolResult,
        }),
      ),
    });
  }
  return {
    model: request.model,
    max_tokens: request.maxTokens ?? DEFAULT_MESSAGES_MAX_TOKENS,
    messages,
    ...(request.system === undefined ? {} : { system: request.system }),
    ...(request.tools === undefined
      ? {}
      : {
          tools: request.tools.map((tool) => ({
            name: tool.name,
            description: tool.description,
            input_schema: tool.parameters as Anthropic.Tool.InputSchema,
          })),
        }),
    ...(request.jsonSchema === undefined
      ? {}
      : { output_config: { format: { type: "json_schema" as const, schema: request.jsonSchema.schema } } }),
    ...(request.reasoning
      ? { thinking: { type: "enabled" as const, budget_tokens: MESSAGES_THINKING_BUDGET } }
      : {}),
  };
}

function readMessage(message: Anthropic.Message): Omit<TurnOutcome, "events"> {
  let text = "";
  let reasoningText = "";
  const toolCalls: ToolCallOutcome[] = [];
  for (const block of message.content) {
    if (block.type === "text") text += block.text;
    else if (block.type === "thinking") reasoningText += block.thinking;
    else if (block.type === "tool_use") {
      toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input) });
    }
  }
  return {
    text,
    reasoningText,
    toolCalls,
    finish: message.stop_reason ?? undefined,
    usage: projectUsage("messages", message.usage),
    assistantTurn: message.content,
    final: message,
  };
}

const messagesDriver: FormatDriver = {
  id: "messages",
  async send({ anthropic }, request, stream) {
    const params = messagesParams(request);
    const events: unknown[] = [];
    if (!stream) {
      try {
        return { ...readMessage(await anthropic.messages.create(params)), events };
      } catch (error) {
        return { text: "", reasoningText: "", toolCalls: [], error, events };
      }
    }
    let text = "";
    try {
      const runner = anthropic.messages.stream(params);
      for await (const event of runner) {
        events.push(event);
        if (event.type === "content_block_delta" && event.delta.type === "text_delta")
          text += event.delta.text;
      }
      return { ...readMessage(await runner.finalMessage()), events };
    } catch (error) {
      return { text, reasoningText: "", toolCalls: [], error, events };
    }
  },
};

export const FORMAT_DRIVERS: Record<FormatId, FormatDriver> = {
  chat: chatDriver,
  responses: responsesDriver,
  messages: messagesDriver,
};

/**
 * The usage fields each format reports, as flat numbers: Chat and Responses include cached tokens
 * in the prompt count; Messages reports the uncached remainder next to the cache counters.
 */
export function projectUsage(
  format: FormatId,
  usage: unknown,
): Record<string, number | undefined> | undefined {
  if (usage === null || usage === undefined) return undefined;
  // biome-ignore lint/suspicious/noExplicitAny: the three usage shapes are read field by field.
  const u = usage as any;
  switch (format) {
    case "chat":
      return {
        prompt_tokens: u.prompt_tokens,
        completion_tokens: u.completion_tokens,
        total_tokens: u.total_tokens,
        cached_tokens: u.prompt_tokens_details?.cached_tokens,
        // Shown only when > 0 (OpenRouter's field; OpenAI's own responses lack it).
        cache_write_tokens: u.prompt_tokens_details?.cache_write_tokens ?? 0,
        reasoning_tokens: u.completion_tokens_details?.reasoning_tokens,
      };
    case "responses":
      return {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        total_tokens: u.total_tokens,
        cached_tokens: u.input_tokens_details?.cached_tokens,
        cache_write_tokens: u.input_tokens_details?.cache_write_tokens,
        reasoning_tokens: u.output_tokens_details?.reasoning_tokens,
      };
    case "messages":
      return {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cache_read_input_tokens: u.cache_read_input_tokens ?? 0,
        cache_creation_input_tokens: u.cache_creation_input_tokens ?? 0,
      };
  }
}
