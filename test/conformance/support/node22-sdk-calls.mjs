// Run by test/conformance/sdk-node22.test.ts under Node 22, from .tools/node22/ (where the test
// copies it, next to the SDKs scripts/install-tools.sh put there). For each model of MODELS it makes
// every SDK's default calls against the gateway at GATEWAY_URL and prints one JSON line per call:
// {sdk, call, model, text, input, output} or {sdk, call, model, error}.
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { ChatOpenAI } from "@langchain/openai";
import { Agent, tool as agentTool, run, setDefaultOpenAIClient, setTracingDisabled } from "@openai/agents";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import OpenAI from "openai";

const url = process.env.GATEWAY_URL;
const apiKey = process.env.GATEWAY_KEY;
const models = JSON.parse(process.env.MODELS);
const TOOL_PROMPT = 'What is the weather? CALL get_weather {"city":"Paris"}';
const WEATHER = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };

const openai = new OpenAI({ apiKey, baseURL: `${url}/api/v1`, maxRetries: 0 });
const aiOpenAI = createOpenAI({ apiKey, baseURL: `${url}/api/v1` });
const aiAnthropic = createAnthropic({ apiKey, baseURL: `${url}/api/v1` });
const aiCompatible = createOpenAICompatible({
  name: "hi",
  apiKey,
  baseURL: `${url}/api/v1`,
  includeUsage: true,
});
setDefaultOpenAIClient(openai);
setTracingDisabled(true);

async function textOf(stream) {
  let text = "";
  for await (const delta of stream) text += delta;
  return text;
}

const aiProviders = {
  "ai/openai": (model) => aiOpenAI(model),
  "ai/openai.chat": (model) => aiOpenAI.chat(model),
  "ai/anthropic": (model) => aiAnthropic(model),
  "ai/openai-compatible": (model) => aiCompatible(model),
};

function calls(model) {
  const list = [
    [
      "openai",
      "chat",
      async () => {
        const completion = await openai.chat.completions.create({
          model,
          messages: [{ role: "user", content: "Hi" }],
        });
        return {
          text: completion.choices[0].message.content,
          input: completion.usage.prompt_tokens,
          output: completion.usage.completion_tokens,
        };
      },
    ],
    [
      "openai",
      "chat stream",
      async () => {
        const stream = await openai.chat.completions.create({
          model,
          messages: [{ role: "user", content: "Hi" }],
          stream: true,
          stream_options: { include_usage: true },
        });
        let text = "";
        let usage;
        for await (const chunk of stream) {
          text += chunk.choices[0]?.delta?.content ?? "";
          if (chunk.usage) usage = chunk.usage;
        }
        return { text, input: usage?.prompt_tokens, output: usage?.completion_tokens };
      },
    ],
    [
      "openai",
      "responses",
      async () => {
        const response = await openai.responses.create({ model, input: "Hi" });
        return {
          text: response.output_text,
          input: response.usage.input_tokens,
          output: response.usage.output_tokens,
        };
      },
    ],
    [
      "openai",
      "responses stream",
      async () => {
        const stream = openai.responses.stream({ model, input: "Hi" });
        const response = await stream.finalResponse();
        return {
          text: response.output_text,
          input: response.usage.input_tokens,
          output: response.usage.output_tokens,
        };
      },
    ],
    [
      "@langchain/openai",
      "invoke",
      async () => {
        const message = await new ChatOpenAI({
          model,
          apiKey,
          configuration: { baseURL: `${url}/api/v1` },
          maxRetries: 0,
        }).invoke("Hi");
        return {
          text: message.text,
          input: message.usage_metadata?.input_tokens,
          output: message.usage_metadata?.output_tokens,
        };
      },
    ],
    [
      "@langchain/openai",
      "stream",
      async () => {
        const chat = new ChatOpenAI({
          model,
          apiKey,
          configuration: { baseURL: `${url}/api/v1` },
          maxRetries: 0,
        });
        let merged;
        for await (const chunk of await chat.stream("Hi"))
          merged = merged === undefined ? chunk : merged.concat(chunk);
        return {
          text: merged.text,
          input: merged.usage_metadata?.input_tokens,
          output: merged.usage_metadata?.output_tokens,
        };
      },
    ],
    [
      "@openai/agents",
      "run with a tool",
      async () => {
        const getWeather = agentTool({
          name: "get_weather",
          description: "Weather of a city",
          parameters: WEATHER,
          strict: false,
          execute: async ({ city }) => `18 C in ${city}`,
        });
        const result = await run(new Agent({ name: "Weather", model, tools: [getWeather] }), TOOL_PROMPT);
        return {
          text: result.finalOutput,
          input: result.state.usage.inputTokens,
          output: result.state.usage.outputTokens,
        };
      },
    ],
  ];
  for (const [sdk, provider] of Object.entries(aiProviders)) {
    list.push([
      sdk,
      "generateText",
      async () => {
        const result = await generateText({ model: provider(model), prompt: "Hi", maxRetries: 0 });
        return { text: result.text, input: result.usage.inputTokens, output: result.usage.outputTokens };
      },
    ]);
    list.push([
      sdk,
      "streamText",
      async () => {
        const result = streamText({ model: provider(model), prompt: "Hi", maxRetries: 0 });
        const text = await textOf(result.textStream);
        const usage = await result.usage;
        return { text, input: usage.inputTokens, output: usage.outputTokens };
      },
    ]);
    list.push([
      sdk,
      "generateText with a tool",
      async () => {
        const getWeather = tool({
          description: "Weather of a city",
          inputSchema: jsonSchema(WEATHER),
          execute: async ({ city }) => `18 C in ${city}`,
        });
        const result = await generateText({
          model: provider(model),
          prompt: TOOL_PROMPT,
          tools: { get_weather: getWeather },
          stopWhen: stepCountIs(3),
          maxRetries: 0,
        });
        return { text: result.text, input: result.usage.inputTokens, output: result.usage.outputTokens };
      },
    ]);
  }
  return list;
}

// The models' call sequences run side by side: each model's calls in order, the kinds at once.
async function runModel(model) {
  for (const [sdk, call, make] of calls(model)) {
    const started = Date.now();
    try {
      const result = await make();
      process.stdout.write(`${JSON.stringify({ sdk, call, model, ms: Date.now() - started, ...result })}\n`);
    } catch (error) {
      process.stdout.write(
        `${JSON.stringify({ sdk, call, model, error: String(error?.stack ?? error).slice(0, 600) })}\n`,
      );
    }
  }
}

await Promise.all(models.map(runModel));
