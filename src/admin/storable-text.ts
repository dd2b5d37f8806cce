/**
 * Whether text a caller chose can be stored and compared by PostgreSQL: its `text` holds no
 * U+0000, and UTF-8 has no form for a lone surrogate (a JSON body's `"\udc00"` carries one).
 * Input that fails is refused with a 400 naming its field, never sent as a statement that fails.
 */
export function isStorableText(text: string): boolean {
  return !text.includes("\u0000") && text.isWellFormed();
}

/** The refusal's wording, after the field's name. */
export const STORABLE_TEXT_RULE = "must be text without NUL characters or lone surrogates";
