/**
 * Headless Chromium for browser tests and the console screenshots: Debian's `chromium` package
 * driven by playwright-core, with a fresh profile folder per launch and everything that would
 * reach beyond loopback switched off. Absent Chromium skips a test with a message, or fails it
 * under CI=true (as the PostgreSQL and Redis suites do).
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { type BrowserContext, chromium } from "playwright-core";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Returns false (after marking the test skipped) when Chromium is missing; throws under CI=true. */
export function requireChromium(t: TestContext): boolean {
  if (existsSync(CHROMIUM_PATH)) return true;
  const reason = `Chromium not found at ${CHROMIUM_PATH} (apt-get install -y chromium)`;
  if (process.env.CI === "true") throw new Error(`${reason} — required when CI=true`);
  t.skip(`${reason} — skipping`);
  return false;
}

export interface HeadlessBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(
  options: { viewport?: { width: number; height: number } } = {},
): Promise<HeadlessBrowser> {
  const profile = await mkdtemp(join(tmpdir(), "gw-chromium-"));
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: options.viewport ?? { width: 1280, height: 800 },
      timeout: 30_000,
    });
    return {
      context,
      async close() {
        await context.close();
        await rm(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(profile, { recursive: true, force: true });
    throw error;
  }
}
