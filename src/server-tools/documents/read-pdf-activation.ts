/**
 * The request's choices for its PDFs: the `pdf` activation's options (`plugins:[{id:"pdf",
 * engine, max_pages, max_file_bytes}]`, a `pdf` tool entry's parameters), or the configured
 * defaults without one. Shared by the file parts' reading and web_fetch, so both apply the same.
 */
import type { CanonicalRequest } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { type PdfRequestOptions, type PdfToolSettings, resolvePdfRequestOptions } from "../pdf/index.js";

/**
 * Throws `invalid_request` naming the option (`plugins[0].engine`) when one is malformed, in
 * `param` and at the start of the message (the Messages envelope has no `param`).
 */
export function readPdfActivation(request: CanonicalRequest, settings: PdfToolSettings): PdfRequestOptions {
  const activation = request.serverTools.find((tool) => tool.id === "pdf");
  const resolved = resolvePdfRequestOptions(activation?.parameters, settings);
  if (resolved.ok) return resolved.options;
  const param = `${activation?.param ?? "tools"}.${resolved.param}`;
  throw GatewayError.invalidRequest(`${param}: ${resolved.message}`, param);
}
