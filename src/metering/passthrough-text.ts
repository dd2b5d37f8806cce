/**
 * The JSON text of a request's passthrough fields (fields sent upstream verbatim), which the input
 * bound counts as text (bound-input-tokens.ts). A client can put hundreds of thousands of values
 * there inside every shape bound of the body reader, and one `JSON.stringify` of them holds the
 * event loop; so the engine makes the text in steps before it bounds the request and leaves it
 * here, by the passthrough object, for every bound of that request (each route's, each round's).
 */
const texts = new WeakMap<object, string>();

/** Keeps `text`, the JSON text of `passthrough`, for the bounds of its request. */
export function rememberPassthroughText(passthrough: Record<string, unknown>, text: string): void {
  texts.set(passthrough, text);
}

/** The text kept for `passthrough`, or made now (a small one, or one nobody made in steps). */
export function readPassthroughText(passthrough: Record<string, unknown>): string {
  return texts.get(passthrough) ?? JSON.stringify(passthrough);
}
