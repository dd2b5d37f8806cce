/**
 * The Gemini API wire shapes this adapter sends and reads (the
 * `@google/genai` package's `src/types.ts`). Names are the API's lowerCamelCase. Response types are
 * deliberately loose
 * (optional and nullable everywhere): Gemini omits zero counters and empty fields, and the parsers
 * check every value before using it.
 */

export interface GeminiInlineData {
  mimeType: string;
  /** Base64 (standard alphabet) bytes. */
  data: string;
}

export interface GeminiFileData {
  mimeType: string;
  fileUri: string;
}

export interface GeminiFunctionCall {
  name: string;
  args: Record<string, unknown>;
}

export interface GeminiFunctionResponse {
  name: string;
  response: Record<string, unknown>;
}

/** One request part. `thoughtSignature` may ride on any of them (thought-signatures docs). */
export type GeminiPart = (
  | { text: string; thought?: true }
  | { inlineData: GeminiInlineData }
  | { fileData: GeminiFileData }
  | { functionCall: GeminiFunctionCall }
  | { functionResponse: GeminiFunctionResponse }
) & { thoughtSignature?: string };

export interface GeminiContent {
  role: "user" | "model";
  parts: GeminiPart[];
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

export interface GeminiToolConfig {
  functionCallingConfig: {
    mode: "AUTO" | "ANY" | "NONE";
    allowedFunctionNames?: string[];
  };
}

export interface GeminiThinkingConfig {
  includeThoughts?: boolean;
  thinkingBudget?: number;
  thinkingLevel?: "minimal" | "low" | "medium" | "high";
}

export interface GeminiGenerationConfig {
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stopSequences?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseMimeType?: string;
  responseSchema?: Record<string, unknown>;
  thinkingConfig?: GeminiThinkingConfig;
}

/** The `generateContent` / `streamGenerateContent` request body. */
export interface GenerateContentBody {
  contents: GeminiContent[];
  systemInstruction?: { parts: Array<{ text: string }> };
  /** Function declarations, and the tools Gemini runs itself (`{googleSearch: {}}`, `{urlContext: {}}`). */
  tools?: Array<
    | { functionDeclarations: GeminiFunctionDeclaration[] }
    | { googleSearch: Record<string, never> }
    | { urlContext: Record<string, never> }
  >;
  toolConfig?: GeminiToolConfig;
  generationConfig?: GeminiGenerationConfig;
  safetySettings?: unknown;
  cachedContent?: unknown;
}

/** A response part as read: any field may be missing. */
export interface GeminiPartWire {
  text?: string | null;
  thought?: boolean | null;
  thoughtSignature?: string | null;
  functionCall?: {
    name?: string | null;
    args?: unknown;
    id?: string | null;
    /** Vertex-only streamed arguments; never requested by this adapter. */
    partialArgs?: unknown;
    willContinue?: boolean | null;
  } | null;
}

export interface GeminiUsageWire {
  promptTokenCount?: number | null;
  candidatesTokenCount?: number | null;
  totalTokenCount?: number | null;
  thoughtsTokenCount?: number | null;
  cachedContentTokenCount?: number | null;
  toolUsePromptTokenCount?: number | null;
}

export interface GeminiCandidateWire {
  content?: { role?: string | null; parts?: GeminiPartWire[] | null } | null;
  finishReason?: string | null;
  finishMessage?: string | null;
  index?: number | null;
  /** What `googleSearch` found and which spans of the answer rest on it (read-grounding.ts). */
  groundingMetadata?: unknown;
  /** What `urlContext` read. */
  urlContextMetadata?: unknown;
}

/** A `GenerateContentResponse`: the whole non-streamed body, or one `data:` frame of a stream. */
export interface GenerateContentResponseWire {
  candidates?: GeminiCandidateWire[] | null;
  promptFeedback?: { blockReason?: string | null; blockReasonMessage?: string | null } | null;
  usageMetadata?: GeminiUsageWire | null;
  modelVersion?: string | null;
  responseId?: string | null;
  error?: unknown;
}
