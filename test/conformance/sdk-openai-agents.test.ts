/**
 * The OpenAI Agents SDK (`@openai/agents`) at its default settings (Responses API) against every
 * provider kind: an agent with a function tool runs the tool the model calls and ends with the
 * model's answer from its result, `run()` and `run({ stream: true })`. Tracing is off: its exporter
 * would send spans to OpenAI.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Agent, run, setDefaultOpenAIClient, setTracingDisabled, tool } from "@openai/agents";
import OpenAI from "openai";
import { z } from "zod";
import { answerAsAgentModel, TOOL_ANSWER_PREFIX } from "../helpers/agent-model.js";
import {
  type ConformanceGateway,
  PROVIDER_KINDS,
  startConformanceGateway,
} from "../helpers/conformance-gateway.js";

const QUESTION = 'What is the weather in Paris? CALL get_weather {"city":"Paris"}';
const FORECAST = "sunny, 21 degrees";

describe("@openai/agents at default settings", () => {
  let context: ConformanceGateway;
  before(async () => {
    context = await startConformanceGateway();
    for (const kind of PROVIDER_KINDS) {
      context.upstreams[kind].answerWith((request) => answerAsAgentModel(kind, request));
    }
    setTracingDisabled(true);
    setDefaultOpenAIClient(
      new OpenAI({ apiKey: context.apiKey, baseURL: `${context.url}/api/v1`, maxRetries: 0 }),
    );
  });
  after(() => context?.close());

  for (const kind of PROVIDER_KINDS) {
    for (const stream of [false, true]) {
      it(`agent with a tool × ${kind} × ${stream ? "streamed" : "run"}`, async () => {
        const cities: string[] = [];
        const weather = tool({
          name: "get_weather",
          description: "Current weather for a city",
          parameters: z.object({ city: z.string() }),
          execute: ({ city }) => {
            cities.push(city);
            return FORECAST;
          },
        });
        const agent = new Agent({
          name: "Forecaster",
          instructions: "Answer questions about the weather.",
          model: context.upstreams[kind].model,
          tools: [weather],
        });
        let finalOutput: unknown;
        if (stream) {
          const result = await run(agent, QUESTION, { stream: true });
          for await (const _event of result) {
            // Read to the end: the run completes as its events are consumed.
          }
          await result.completed;
          finalOutput = result.finalOutput;
        } else {
          finalOutput = (await run(agent, QUESTION)).finalOutput;
        }
        assert.deepEqual(cities, ["Paris"], "the tool ran once with the model's arguments");
        assert.equal(finalOutput, `${TOOL_ANSWER_PREFIX}${FORECAST}`);
      });
    }
  }
});
