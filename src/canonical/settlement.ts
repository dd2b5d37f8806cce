import type { CanonicalUsage, FinishReason } from "./index.js";
import type { ServerToolCounts } from "./server-tool.js";

/** What a finished generation is billed: the engine computes it, every ingress format encodes it. */
export interface Settlement {
  usage: CanonicalUsage;
  /** Model usage and server-tool calls together. */
  costMicroUsd: number;
  finishReason: FinishReason;
  /**
   * Server-tool calls the run executed, by tool (failed ones included); absent when the request
   * activated no server tool. Messages renders it as `usage.server_tool_use`.
   */
  serverToolCalls?: ServerToolCounts;
}
