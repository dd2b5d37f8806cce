import type { ProviderKind } from "../../catalog/types.js";

/** The kind this adapter registers under; also the owner recorded in its reasoning state. */
export const RESPONSES_PROVIDER_KIND = "openai-responses" satisfies ProviderKind;
