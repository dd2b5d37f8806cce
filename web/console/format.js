// Money arrives as exact integer micro-USD strings; it is formatted with BigInt so no amount is
// ever rounded through a float.

const MICRO_PER_USD = 1_000_000n;

/** "180" → "$0.00018", "10000000" → "$10.00", null → "—". */
export function formatUsd(microUsd) {
  if (microUsd === null || microUsd === undefined) return "—";
  let value = BigInt(microUsd);
  const negative = value < 0n;
  if (negative) value = -value;
  const whole = (value / MICRO_PER_USD).toLocaleString("en-US");
  const fraction = (value % MICRO_PER_USD).toString().padStart(6, "0").replace(/0+$/, "").padEnd(2, "0");
  return `${negative ? "-" : ""}$${whole}.${fraction}`;
}

/** A compact axis label: "$0.0012", "$1.5", "$120". */
export function formatUsdShort(microUsd) {
  const usd = Number(microUsd) / 1e6;
  if (usd === 0) return "$0";
  return `$${usd.toPrecision(usd >= 1 ? 3 : 2).replace(/\.?0+$/, "")}`;
}

export function formatCount(value) {
  return value === null || value === undefined ? "—" : Number(value).toLocaleString("en-US");
}

/** ISO-8601 → "2026-05-21 14:03:07 UTC". */
export function formatTime(iso) {
  if (!iso) return "—";
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/** Decimal USD typed by a person, passed on as text: the admin API converts it exactly. */
export function readUsdInput(value) {
  const text = String(value ?? "").trim();
  return text === "" ? undefined : text;
}
