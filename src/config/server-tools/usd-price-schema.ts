/**
 * A tool price in the config file: USD as a number or decimal text ("0.04"), parsed exactly into
 * integer micro-USD (metering/money.ts), so a bad value fails validation with the field's path.
 */
import { z } from "zod";
import { tryParseUsdToMicroUsd } from "../../metering/money.js";

export const usdPriceSchema = z.union([z.number(), z.string()]).transform((value, context): number => {
  const parsed = tryParseUsdToMicroUsd(value);
  if (!parsed.ok) {
    context.addIssue({ code: "custom", message: parsed.reason });
    return z.NEVER;
  }
  return parsed.microUsd;
});
