/**
 * Conformance matrix, ingress format `responses`: every provider kind × every scenario × streaming
 * and non-streaming, through the official client (support/matrix.ts; docs/conformance.md).
 */
import { registerMatrix } from "./support/matrix.js";

// Known gateway bugs (docs/conformance.md, "Known failures"); the cells stay registered as todo.

/** Gemini's thought signature rides on the function call and is lost in this format. */
const GEMINI_CALL_SIGNATURE_LOST =
  "src/ingress/responses encode-output-items.ts / stream-encoder.ts drop the providerState of tool-call parts " +
  "(decode-input.ts has no way back): Gemini gets skip_thought_signature_validator instead of its signature on turn 2";

registerMatrix({
  format: "responses",
  todo: {
    "responses × google × reasoning × non-stream": GEMINI_CALL_SIGNATURE_LOST,
    "responses × google × reasoning × stream": GEMINI_CALL_SIGNATURE_LOST,
  },
});
