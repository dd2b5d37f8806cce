/**
 * An attempt's documents as its route reads them (generation-run.ts): the route's first request
 * gets the files, or their text, and the run's usage the price of reading them.
 */
import type { CatalogModel } from "../catalog/types.js";
import { type GatewayError, toGatewayError } from "../errors/gateway-error.js";
import { type ProviderAdapter, routeReadsPdf } from "../providers/provider-adapter.js";
import type { AdmittedGeneration } from "./admitted-generation.js";
import type { RunUsage } from "./run-usage.js";

/**
 * Reads `admitted`'s documents for the route of `adapter` and `model` into its call's request;
 * undefined when done (or there are none), else the error a document that cannot be read ends the
 * run with (`invalid_request` naming the part): no upstream attempt, so none is recorded.
 */
export async function readRouteDocuments(
  admitted: AdmittedGeneration,
  adapter: ProviderAdapter,
  model: CatalogModel,
  /** The run's control: its signal is asked for only when there are documents (it builds one). */
  control: { readonly signal: AbortSignal },
  usage: RunUsage,
): Promise<GatewayError | undefined> {
  if (admitted.documents === undefined) return undefined;
  try {
    const read = await admitted.documents.requestFor(
      admitted.call.request,
      routeReadsPdf(adapter, model),
      control.signal,
    );
    admitted.call.request = read.request;
    usage.documentMicroUsd = read.costMicroUsd;
    return undefined;
  } catch (thrown) {
    return toGatewayError(thrown);
  }
}
