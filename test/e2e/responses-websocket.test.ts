/**
 * The Responses WebSocket mode on a real gateway, in both runtime modes, driven by the official
 * SDK's `ResponsesWS` and by a plain WebSocket client speaking the protocol as Codex does
 * (test/helpers/responses-socket-client.ts): turns on one socket, `previous_response_id` from the
 * socket's own last response only, each turn one generation with its own record and cost, limits
 * per turn, refusals at the handshake and as `error` events, the bound on what a socket keeps, the
 * warmup Codex sends first, and the socket's end at shutdown.
 */
import assert from "node:assert/strict";
import { connect as connectTcp } from "node:net";
import { Writable } from "node:stream";
import { ResponsesWS } from "openai/resources/responses/ws";
import { buildTextChunks, fakeReply } from "../helpers/fake-openai-upstream.js";
import { ResponsesSocketClient, type SocketEvent, toSocketUrl } from "../helpers/responses-socket-client.js";
import { forEachGatewayMode, TEST_MODEL, type TestGateway } from "../helpers/test-gateway.js";

/** The body cap of this gateway: also the most a socket keeps of its last response. */
const MAX_BODY_BYTES = 65_536;

class CapturedLog extends Writable {
  text = "";
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString("utf8");
    done();
  }
  /** The `request` line of `requestId`, once written (a generation's after its settlement). */
  async requestLine(requestId: string): Promise<Record<string, unknown>> {
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
      for (const line of this.text.split("\n")) {
        if (!line.includes(requestId)) continue;
        const parsed = JSON.parse(line) as Record<string, unknown>;
        if (parsed.msg === "request" && parsed.requestId === requestId) return parsed;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`no request line for ${requestId}`);
  }
}

const log = new CapturedLog();

/** A streamed upstream answer with exactly these usage counts. */
function answer(text: string, promptTokens: number, completionTokens: number) {
  return fakeReply.sse(
    buildTextChunks([text], {
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
      },
    }),
  );
}

function connect(context: TestGateway, apiKey = context.apiKey): Promise<ResponsesSocketClient> {
  return ResponsesSocketClient.connect(toSocketUrl(context.url), apiKey);
}

async function readGeneration(context: TestGateway, id: string) {
  for (const deadline = Date.now() + 10_000; ; ) {
    const response = await fetch(`${context.url}/api/v1/generation?id=${id}`, {
      headers: { authorization: `Bearer ${context.apiKey}` },
    });
    const body = (await response.json()) as { data?: Record<string, unknown> };
    if (response.status === 200 && body.data?.status !== "in_progress") return body.data!;
    if (Date.now() > deadline)
      throw new Error(`generation ${id}: ${response.status} ${JSON.stringify(body)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function completed(events: SocketEvent[]): SocketEvent {
  const last = events.at(-1)!;
  assert.equal(last.type, "response.completed", JSON.stringify(last));
  return last.response;
}

function upstreamMessages(context: TestGateway, index: number): Array<{ role: string; content: unknown }> {
  return context.upstream.requests[index]!.body.messages;
}

forEachGatewayMode(
  "Responses WebSocket mode",
  async (context, t) => {
    await t.test(
      "official SDK: two turns on one socket, the second continuing the first by previous_response_id; each turn its own generation at its own cost",
      async () => {
        const before = context.upstream.requests.length;
        context.upstream.enqueue(answer("First answer.", 1000, 500), answer("Second answer.", 3000, 250));
        const socket = new ResponsesWS(context.openai);
        const events: SocketEvent[] = [];
        const errors: unknown[] = [];
        let turnEnded: () => void = () => {};
        socket.on("error", (error) => {
          errors.push(error);
          turnEnded();
        });
        socket.on("event", (event) => {
          events.push(event as SocketEvent);
          if (event.type === "response.completed") turnEnded();
        });
        const turn = (event: Record<string, unknown>) =>
          new Promise<void>((resolve) => {
            turnEnded = resolve;
            socket.send(event as never);
          });
        try {
          await turn({
            type: "response.create",
            model: TEST_MODEL,
            instructions: "Be brief.",
            input: "Question one",
            store: false,
          });
          const first = completed(events);
          await turn({
            type: "response.create",
            model: TEST_MODEL,
            instructions: "Be terse.",
            previous_response_id: first.id,
            input: [{ role: "user", content: "Question two" }],
            store: false,
          });
        } finally {
          socket.close();
        }
        assert.deepEqual(errors, []);
        const [firstTurn, secondTurn] = splitTurns(events);
        assert.deepEqual(
          firstTurn!.map((event) => event.type),
          [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed",
          ],
        );
        for (const turnEvents of [firstTurn!, secondTurn!]) {
          assert.deepEqual(
            turnEvents.map((event) => event.sequence_number),
            turnEvents.map((_, index) => index),
          );
        }
        const first = completed(firstTurn!);
        const second = completed(secondTurn!);
        assert.notEqual(first.id, second.id);
        assert.equal(second.output[0].content[0].text, "Second answer.");

        // The second upstream request carries the whole conversation; instructions are the turn's own.
        assert.equal(context.upstream.requests.length, before + 2);
        assert.deepEqual(upstreamMessages(context, before + 1), [
          { role: "system", content: "Be terse." },
          { role: "user", content: "Question one" },
          { role: "assistant", content: "First answer." },
          { role: "user", content: "Question two" },
        ]);

        // $2/M prompt, $8/M completion: 1000 × 2 + 500 × 8 and 3000 × 2 + 250 × 8 micro-USD.
        assert.equal(first.usage.cost, 0.006);
        assert.equal(second.usage.cost, 0.008);
        for (const [response, cost, tokensIn, tokensOut] of [
          [first, "6000", 1000, 500],
          [second, "8000", 3000, 250],
        ] as const) {
          const record = await readGeneration(context, response.id);
          assert.equal(record.status, "ok");
          assert.equal(record.stream, true);
          assert.equal(record.ingress_format, "responses");
          assert.equal(record.cost_micro_usd, cost);
          assert.equal(record.tokens_prompt, tokensIn);
          assert.equal(record.tokens_completion, tokensOut);
          const line = await log.requestLine(response.id.slice("resp_".length));
          assert.equal(line.method, "WS");
          assert.equal(line.route, "/api/v1/responses");
          assert.equal(line.status, 200);
          assert.equal(line.costMicroUsd, Number(cost));
        }
      },
    );

    await t.test(
      "the drop report: hi_dropped on the turn's response.created and response.completed; strict refuses with an error event",
      async () => {
        const client = await connect(context);
        try {
          const namespace = {
            type: "namespace",
            name: "multi_agent_v1",
            tools: [{ type: "function", name: "spawn_agent", parameters: { type: "object" } }],
          };
          context.upstream.enqueue(answer("Hello.", 10, 5));
          const events = await client.turn({ model: TEST_MODEL, input: "hi", tools: [namespace] });
          assert.deepEqual(events[0]!.response.hi_dropped, ["tools[0](namespace)"]);
          assert.deepEqual(completed(events).hi_dropped, ["tools[0](namespace)"]);
          assert.ok(
            events.slice(1, -1).every((event) => event.response?.hi_dropped === undefined),
            "only the response objects of the start and the end carry it",
          );
          const record = await readGeneration(context, events[0]!.response.id);
          assert.deepEqual(record.dropped, ["tools[0](namespace)"]);
          // A turn that loses nothing has no such field.
          context.upstream.enqueue(answer("Again.", 10, 5));
          assert.equal(
            completed(await client.turn({ model: TEST_MODEL, input: "hi" })).hi_dropped,
            undefined,
          );
          const before = context.upstream.requests.length;
          const refused = await client.turn({
            model: TEST_MODEL,
            input: "hi",
            tools: [namespace],
            hi_strict: true,
          });
          assert.equal(refused.length, 1);
          assert.equal(refused[0]!.type, "error");
          assert.equal(refused[0]!.error.param, "tools[0]");
          assert.equal(context.upstream.requests.length, before);
        } finally {
          await client.close();
        }
      },
    );

    await t.test(
      "a key over its limit is refused on its next turn with an error event; the socket stays open",
      async () => {
        const { key, secret } = await context.admin.createKey({ workspaceId: context.workspaceId });
        const client = await connect(context, secret);
        try {
          context.upstream.enqueue(answer("Within the limit.", 10, 5));
          const first = completed(await client.turn({ model: TEST_MODEL, input: "one" }));
          await context.admin.updateKey(key.id, { totalLimitUsd: "0.000001" });
          const before = context.upstream.requests.length;
          const refused = await client.turn({
            model: TEST_MODEL,
            previous_response_id: first.id,
            input: "two",
          });
          assert.equal(refused.length, 1);
          const [error] = refused;
          assert.equal(error!.type, "error");
          assert.equal(error!.status, 402);
          assert.equal(error!.error.code, "key_limit_exceeded");
          assert.equal(error!.error.type, "insufficient_quota");
          assert.equal(typeof error!.error.request_id, "string");
          assert.equal(context.upstream.requests.length, before, "a refused turn reaches no upstream");

          // The limit lifted, the same socket serves again, still continuing the first response.
          await context.admin.updateKey(key.id, { totalLimitUsd: null });
          context.upstream.enqueue(answer("After the limit.", 10, 5));
          completed(await client.turn({ model: TEST_MODEL, previous_response_id: first.id, input: "three" }));
          assert.equal(upstreamMessages(context, before).length, 3);
        } finally {
          await client.close();
        }
      },
    );

    await t.test("refused handshakes: a bad key 401, another path 404, another version 426", async () => {
      const before = context.upstream.requests.length;
      for (const apiKey of [undefined, "nope", `hi-${"x".repeat(40)}`]) {
        const refusal = await ResponsesSocketClient.connect(toSocketUrl(context.url), apiKey).then(
          () => assert.fail("the handshake must be refused"),
          (error: { status: number; body: { error: { code: string; type: string } } }) => error,
        );
        assert.equal(refusal.status, 401, String(apiKey));
        assert.equal(refusal.body.error.code, "invalid_api_key");
        assert.equal(refusal.body.error.type, "authentication_error");
      }
      const elsewhere = await ResponsesSocketClient.connect(
        toSocketUrl(context.url, "/api/v1/chat/completions"),
        context.apiKey,
      ).then(
        () => assert.fail("the handshake must be refused"),
        (error: { status: number; body: { error: { message: string } } }) => error,
      );
      assert.equal(elsewhere.status, 404);
      assert.match(elsewhere.body.error.message, /\/api\/v1\/responses only/);
      const version = await rawHandshake(context, { "Sec-WebSocket-Version": "12" });
      assert.match(version, /^HTTP\/1\.1 426 /);
      assert.match(version, /Sec-WebSocket-Version: 13/i);
      assert.equal(context.upstream.requests.length, before);
    });

    await t.test("a request that offers Upgrade: h2c is still served as HTTP/1.1", async () => {
      const body = JSON.stringify({ model: TEST_MODEL, messages: [{ role: "user", content: "hi" }] });
      const answer = await rawExchange(
        context,
        "POST /api/v1/chat/completions HTTP/1.1\r\n" +
          `Host: x\r\nAuthorization: Bearer ${context.apiKey}\r\nContent-Type: application/json\r\n` +
          "Connection: Upgrade, HTTP2-Settings, close\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n" +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      assert.match(answer, /^HTTP\/1\.1 200 /);
      assert.match(answer, /"object":"chat\.completion"/);
    });

    await t.test(
      "previous_response_id of another socket, or of an older response, is refused naming the field",
      async () => {
        const a = await connect(context);
        const b = await connect(context);
        try {
          const a1 = completed(await a.turn({ model: TEST_MODEL, input: "a1" }));
          const before = context.upstream.requests.length;
          const [fromB] = await b.turn({ model: TEST_MODEL, previous_response_id: a1.id, input: "b1" });
          assert.equal(fromB!.type, "error");
          assert.equal(fromB!.status, 400);
          assert.equal(fromB!.error.code, "invalid_request");
          assert.equal(fromB!.error.param, "previous_response_id");
          assert.equal(context.upstream.requests.length, before);

          completed(await a.turn({ model: TEST_MODEL, previous_response_id: a1.id, input: "a2" }));
          const [older] = await a.turn({ model: TEST_MODEL, previous_response_id: a1.id, input: "a3" });
          assert.equal(older!.error.param, "previous_response_id");
        } finally {
          await a.close();
          await b.close();
        }
      },
    );

    await t.test(
      "what a socket keeps is bounded by the body cap: a longer conversation is refused or not kept",
      async () => {
        const client = await connect(context);
        try {
          const kept = completed(await client.turn({ model: TEST_MODEL, input: "k".repeat(40_000) }));
          const [tooLong] = await client.turn({
            model: TEST_MODEL,
            previous_response_id: kept.id,
            input: "l".repeat(30_000),
          });
          assert.equal(tooLong!.status, 413);
          assert.equal(tooLong!.error.code, "payload_too_large");
          // The refused turn replaced nothing: the conversation still continues from `kept`.
          completed(await client.turn({ model: TEST_MODEL, previous_response_id: kept.id, input: "short" }));

          const notKept = completed(
            await client.turn({ model: TEST_MODEL, input: "n".repeat(MAX_BODY_BYTES - 200) }),
          );
          const [forgotten] = await client.turn({
            model: TEST_MODEL,
            previous_response_id: notKept.id,
            input: "more",
          });
          assert.equal(forgotten!.status, 400);
          assert.equal(forgotten!.error.param, "previous_response_id");

          client.send({ type: "response.create", model: TEST_MODEL, input: "o".repeat(MAX_BODY_BYTES) });
          assert.equal((await client.closed).code, 1009);
        } finally {
          await client.close();
        }
      },
    );

    await t.test(
      "Codex's flow: a warmup (generate:false) answers an empty response without a generation; the next turn continues it with an empty input",
      async () => {
        const client = await connect(context);
        try {
          const before = context.upstream.requests.length;
          const request = {
            model: TEST_MODEL,
            instructions: "You are Codex.",
            input: "Fix the bug",
            stream: true,
          };
          const warmup = await client.turn({ generate: false, ...request });
          assert.deepEqual(
            warmup.map((event) => event.type),
            ["response.created", "response.in_progress", "response.completed"],
          );
          const warm = completed(warmup);
          assert.deepEqual(warm.output, []);
          assert.equal(warm.usage.total_tokens, 0);
          assert.equal(context.upstream.requests.length, before, "a warmup calls no upstream");
          const lookup = await fetch(`${context.url}/api/v1/generation?id=${warm.id}`, {
            headers: { authorization: `Bearer ${context.apiKey}` },
          });
          const missing = (await lookup.json()) as { error: { message: string } };
          assert.equal(lookup.status, 400);
          assert.match(missing.error.message, /No generation with id/, "a warmup has no generation record");

          context.upstream.enqueue(answer("Fixed.", 20, 3));
          const real = completed(await client.turn({ previous_response_id: warm.id, ...request, input: [] }));
          assert.equal(real.output[0].content[0].text, "Fixed.");
          assert.deepEqual(upstreamMessages(context, before), [
            { role: "system", content: "You are Codex." },
            { role: "user", content: "Fix the bug" },
          ]);
        } finally {
          await client.close();
        }
      },
    );

    await t.test(
      "turns run one at a time, in order; odd messages get error events and change nothing",
      async () => {
        const client = await connect(context);
        try {
          context.upstream.enqueue(
            fakeReply.sse([{ delayMs: 150 }, ...buildTextChunks(["slow"])]),
            answer("fast", 10, 5),
          );
          client.send({ type: "response.create", model: TEST_MODEL, input: "first", stream_id: "lane.1" });
          client.send({ type: "response.create", model: TEST_MODEL, input: "second" });
          const first = await client.readTurn();
          const second = await client.readTurn();
          assert.ok(first.every((event) => event.stream_id === "lane.1"));
          assert.ok(second.every((event) => event.stream_id === undefined));
          assert.equal(completed(first).output[0].content[0].text, "slow");
          assert.equal(completed(second).output[0].content[0].text, "fast");

          client.send({ type: "response.processed", response_id: completed(second).id });
          client.socket.send(Buffer.from("{}"), { binary: true });
          client.send("not json");
          client.send({ type: "response.append", input: [] });
          const refusals = [await client.nextEvent(), await client.nextEvent(), await client.nextEvent()];
          assert.deepEqual(
            refusals.map((event) => [event.type, event.status, event.error.param]),
            [
              ["error", 400, null],
              ["error", 400, null],
              ["error", 400, "type"],
            ],
          );
          completed(
            await client.turn({
              model: TEST_MODEL,
              previous_response_id: completed(second).id,
              input: "still",
            }),
          );
        } finally {
          await client.close();
        }
      },
    );

    await t.test("at most 16 messages wait behind a turn; more are refused", async () => {
      const client = await connect(context);
      try {
        context.upstream.enqueue(fakeReply.hang());
        for (let index = 0; index < 18; index++) {
          client.send({ type: "response.create", model: TEST_MODEL, input: `m${index}` });
        }
        const refused = await client.nextEvent();
        assert.equal(refused.type, "error");
        assert.match(refused.error.message, /Too many messages are waiting/);
      } finally {
        await client.close();
      }
    });

    await t.test("shutdown: the turn in progress ends, then the socket closes with 1001", async () => {
      const client = await connect(context);
      context.upstream.enqueue(fakeReply.sse([{ delayMs: 200 }, ...buildTextChunks(["last words"])]));
      client.send({ type: "response.create", model: TEST_MODEL, input: "one more" });
      assert.equal((await client.nextEvent()).type, "response.created");
      const closing = context.gateway.close();
      const rest = await client.readTurn();
      assert.equal(completed(rest).output[0].content[0].text, "last words");
      assert.equal((await client.closed).code, 1001);
      await closing;
    });
  },
  {
    logDestination: log,
    logLevel: "info",
    // The shutdown test's turn must be allowed to end by itself, however loaded the machine.
    drainMs: 30_000,
    configOverrides: { limits: { max_body_bytes: MAX_BODY_BYTES } },
  },
);

/** The events of consecutive turns, each ending with its terminal event. */
function splitTurns(events: SocketEvent[]): SocketEvent[][] {
  const turns: SocketEvent[][] = [[]];
  for (const event of events) {
    turns.at(-1)!.push(event);
    if (event.type === "response.completed") turns.push([]);
  }
  return turns.filter((turn) => turn.length > 0);
}

/** A handshake written by hand, for headers a WebSocket client would not send; the answer's text. */
function rawHandshake(context: TestGateway, headers: Record<string, string>): Promise<string> {
  const lines = {
    Host: "127.0.0.1",
    Connection: "Upgrade",
    Upgrade: "websocket",
    Authorization: `Bearer ${context.apiKey}`,
    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
    "Sec-WebSocket-Version": "13",
    ...headers,
  };
  let request = "GET /api/v1/responses HTTP/1.1\r\n";
  for (const [name, value] of Object.entries(lines)) request += `${name}: ${value}\r\n`;
  return rawExchange(context, `${request}\r\n`);
}

/** Writes `request` on a new connection; what came back once the server closed it. */
function rawExchange(context: TestGateway, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connectTcp(Number(new URL(context.url).port), "127.0.0.1");
    let text = "";
    socket.on("data", (chunk) => {
      text += chunk;
    });
    socket.on("close", () => resolve(text));
    socket.on("error", reject);
    socket.write(request);
  });
}
