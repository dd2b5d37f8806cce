/**
 * Webhook signatures: `X-Hi-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>` over
 * `<t>.<raw body>` with the workspace's secret (docs/limits.md, "Verifying a webhook"). The time is
 * signed with the body, so a receiver can refuse old replays.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export const SIGNATURE_HEADER = "X-Hi-Signature";

export function createWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString("base64url")}`;
}

export function signWebhook(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac("sha256", secret).update(`${unixSeconds}.${body}`).digest("hex");
  return `t=${unixSeconds},v1=${mac}`;
}

/** What a receiver does: true when `header` signs `body` with `secret` (time not checked here). */
export function verifyWebhook(secret: string, body: string, header: string): boolean {
  const parts = Object.fromEntries(header.split(",").map((part) => part.split("=", 2) as [string, string]));
  if (parts.t === undefined || parts.v1 === undefined) return false;
  const expected = Buffer.from(signWebhook(secret, body, Number(parts.t)).split("v1=")[1], "hex");
  const given = Buffer.from(parts.v1, "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}
