/**
 * What the demo provider answers: a fixed function of the request, so a first run, a test or a
 * screenshot gets the same answer every time. It echoes the last user message (or the last tool
 * result), and calls a tool when the request insists on one (`tool_choice` required or naming a
 * tool), so agent clients can walk through a tool round too.
 */
import type { CanonicalRequest } from "../../canonical/index.js";

/** The longest part of the caller's text that is echoed back. */
const ECHOED_CHARACTERS = 400;

export type DemoReply =
  | { type: "text"; text: string }
  | { type: "tool-call"; id: string; name: string; arguments: string };

export function buildDemoReply(request: CanonicalRequest, upstreamModel: string): DemoReply {
  const last = request.messages.at(-1);
  const forced = request.toolChoice;
  if (
    last?.role !== "tool" &&
    request.tools.length > 0 &&
    (forced?.type === "required" || forced?.type === "tool")
  ) {
    const name = forced.type === "tool" ? forced.name : request.tools[0].name;
    return { type: "tool-call", id: `call_demo_${request.messages.length}`, name, arguments: "{}" };
  }
  const said =
    last?.role === "tool"
      ? `the tool returned "${clip(last.content.flatMap((part) => part.content.map(readText)).join(" "))}"`
      : `you said "${clip(lastUserText(request))}"`;
  return {
    type: "text",
    text: `Demo answer from ${upstreamModel} (made by the gateway itself; no model was called): ${said}.`,
  };
}

function lastUserText(request: CanonicalRequest): string {
  for (let index = request.messages.length - 1; index >= 0; index--) {
    const message = request.messages[index];
    if (message.role === "user") return message.content.map(readText).join(" ");
  }
  return "";
}

function readText(part: { type: string; text?: string }): string {
  return part.type === "text" ? (part.text ?? "") : `[${part.type}]`;
}

function clip(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= ECHOED_CHARACTERS ? flat : `${flat.slice(0, ECHOED_CHARACTERS)}…`;
}
