/**
 * Conformance matrix, ingress format `responses`: every provider kind × every scenario × streaming
 * and non-streaming, through the official client (support/matrix.ts; docs/conformance.md).
 */
import { registerMatrix } from "./support/matrix.js";

registerMatrix({
  format: "responses",
  todo: {},
});
