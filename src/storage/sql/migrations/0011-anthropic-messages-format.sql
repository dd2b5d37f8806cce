-- The Messages format's stored name is `anthropic_messages`. Rows written before say
-- `vendor_messages` and keep it (rewriting every row of a large table buys nothing): the readers
-- map it (canonical/ingress-format-name.ts). Both stay allowed, so an instance of the previous
-- version still running during a rolling upgrade can write its rows.
ALTER TABLE generations DROP CONSTRAINT IF EXISTS generations_ingress_format_check;
ALTER TABLE generations ADD CONSTRAINT generations_ingress_format_check
  CHECK (ingress_format IN ('chat_completions', 'responses', 'anthropic_messages', 'vendor_messages'));
