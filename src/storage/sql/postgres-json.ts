/**
 * JSON text for a `jsonb` parameter. PostgreSQL refuses `\u0000` in `jsonb` (it cannot become
 * `text`) and a lone surrogate (UTF-8 cannot hold one), and one refused value fails the whole
 * statement: a batch of usage records with it. Values can carry strings a caller chose (a dropped
 * field's or tool type's name), so each such character becomes U+FFFD. `JSON.stringify` writes both
 * as `\u` escapes and nothing else as one, so only a text with such an escape is encoded again.
 */
const UNSAFE_ESCAPE = /\\u(?:0000|d[89a-f])/i;

export function toPostgresJson(value: unknown): string {
  const text = JSON.stringify(value);
  return UNSAFE_ESCAPE.test(text) ? JSON.stringify(value, replaceUnsafeCharacters) : text;
}

function replaceUnsafeCharacters(_key: string, value: unknown): unknown {
  return typeof value === "string" ? value.toWellFormed().replaceAll("\u0000", "\ufffd") : value;
}
