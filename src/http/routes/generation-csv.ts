/**
 * Requests as CSV rows (RFC 4180): a field holding a comma, a quote or a line break is quoted,
 * its quotes doubled. A text field a spreadsheet would run as a formula (starting with `=`, `+`,
 * `-`, `@`, tab or carriage return) is prefixed with `'`, so an exported model name or session id
 * can never become one (CSV injection); numbers are written as they are.
 */
import type { GenerationRecord } from "../../engine/generation-record.js";

type Cell = string | number | boolean | null | undefined;

const COLUMNS: Array<[heading: string, read: (record: GenerationRecord) => Cell, text?: true]> = [
  ["id", (r) => r.id, true],
  ["created_at", (r) => r.createdAt.toISOString()],
  ["finished_at", (r) => r.finishedAt?.toISOString()],
  ["api_key_id", (r) => r.apiKeyId, true],
  ["model", (r) => r.model, true],
  ["status", (r) => r.status, true],
  ["error_code", (r) => r.errorCode, true],
  ["upstream_provider", (r) => r.upstreamProvider, true],
  ["upstream_model", (r) => r.upstreamModel, true],
  ["ingress_format", (r) => r.ingressFormat, true],
  ["source", (r) => r.source, true],
  ["stream", (r) => r.stream],
  ["tokens_prompt", (r) => r.tokensPrompt ?? 0],
  ["tokens_completion", (r) => r.tokensCompletion ?? 0],
  ["tokens_reasoning", (r) => r.tokensReasoning ?? 0],
  ["tokens_cached_prompt", (r) => r.tokensCachedPrompt ?? 0],
  ["cost_micro_usd", (r) => r.costMicroUsd ?? 0],
  ["latency_ms", (r) => r.latencyMs],
  ["finish_reason", (r) => r.finishReason, true],
  ["attempts", (r) => r.attempts?.length ?? 0],
  ["session_id", (r) => r.sessionId, true],
  ["client", (r) => r.client, true],
];

const NEEDS_QUOTES = /[",\r\n]/;
const FORMULA_START = /^[=+\-@\t\r]/;

export function formatCsvField(value: Cell, text = false): string {
  if (value === null || value === undefined) return "";
  let field = String(value);
  if (text && FORMULA_START.test(field)) field = `'${field}`;
  return NEEDS_QUOTES.test(field) ? `"${field.replaceAll('"', '""')}"` : field;
}

export function formatCsvHeader(): string {
  return `${COLUMNS.map(([heading]) => heading).join(",")}\r\n`;
}

export function formatCsvRow(record: GenerationRecord): string {
  return `${COLUMNS.map(([, read, text]) => formatCsvField(read(record), text)).join(",")}\r\n`;
}
