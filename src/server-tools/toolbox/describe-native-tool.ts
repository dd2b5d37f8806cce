/**
 * A web_search or web_fetch activation as a provider runs the tool itself (engine/ports.ts
 * `ServerTools.describeNative`): the options the gateway's own tool takes, checked the same way
 * (`invalid_request` naming a malformed one), in the vocabulary adapters write in their provider's
 * form. Options only the gateway's tool has (`max_results`) are not part of it.
 */
import type { NativeServerTool, ServerToolActivation } from "../../canonical/index.js";
import { resolveWebSearchActivation } from "../web-search/index.js";
import { readWebFetchActivation } from "./prepare-web-fetch-tool.js";
import { createActivationError } from "./prepared-tool.js";

export interface NativeToolLimits {
  /** `max_results` is still checked against the gateway's own bound, so a request reads the same either way. */
  maxResultCount: number;
  /** The most text of one page a model reads, whoever fetches it. */
  maxContentTokens: number;
}

export function describeNativeTool(
  activation: ServerToolActivation,
  limits: NativeToolLimits,
): NativeServerTool | undefined {
  switch (activation.id) {
    case "web_search": {
      const resolved = resolveWebSearchActivation(activation.parameters, limits.maxResultCount);
      if (!resolved.ok) {
        throw createActivationError(
          activation,
          `web_search ${resolved.param} ${resolved.message}`,
          resolved.param,
        );
      }
      const { options } = resolved;
      return {
        tool: "web_search",
        maxUses: activation.maxUses,
        ...(options.allowedDomains === undefined ? {} : { allowedDomains: options.allowedDomains }),
        ...(options.blockedDomains === undefined ? {} : { blockedDomains: options.blockedDomains }),
        ...(options.userLocation === undefined ? {} : { userLocation: options.userLocation }),
        ...(options.contextSize === undefined ? {} : { searchContextSize: options.contextSize }),
      };
    }
    case "web_fetch": {
      const options = readWebFetchActivation(activation);
      return {
        tool: "web_fetch",
        maxUses: activation.maxUses,
        ...(options.allowedDomains.length === 0 ? {} : { allowedDomains: options.allowedDomains }),
        ...(options.blockedDomains.length === 0 ? {} : { blockedDomains: options.blockedDomains }),
        maxContentTokens: Math.min(
          limits.maxContentTokens,
          options.maxContentTokens ?? Number.POSITIVE_INFINITY,
        ),
      };
    }
    default:
      return undefined;
  }
}
