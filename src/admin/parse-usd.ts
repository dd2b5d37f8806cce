/** Admin-facing USD parsing: the exact conversion of metering/money.ts, failing as `invalid_request`. */
import { GatewayError } from "../errors/gateway-error.js";
import { type ParseUsdOptions, tryParseUsdToMicroUsd } from "../metering/money.js";

export { convertMicroUsdToUsd, formatMicroUsd, tryParseUsdToMicroUsd } from "../metering/money.js";

/** Throws `invalid_request` naming `param` when the value is not an exact USD amount. */
export function parseUsdToMicroUsd(
  value: unknown,
  options: ParseUsdOptions & { param?: string } = {},
): number {
  const result = tryParseUsdToMicroUsd(value, options);
  if (!result.ok) {
    const name = options.param ?? "amount";
    throw GatewayError.invalidRequest(`${name} ${result.reason}`, options.param ?? null);
  }
  return result.microUsd;
}
