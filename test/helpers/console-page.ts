/**
 * What every browser test of the web console watches and does: page errors, console errors (but
 * the refusals a test provokes on purpose), requests that leave the gateway, and signing in.
 */
import type { Page } from "playwright-core";
import type { TestGateway } from "./test-gateway.js";

export interface PageWatch {
  /** Script errors, console errors (CSP violations among them) not expected by the test. */
  problems: string[];
  /** Requests to any origin but the gateway's (a blob: download is the page's own). */
  elsewhere: string[];
}

/** `expected`: console errors the test provokes (e.g. `/status of 400/` for a refused value). */
export function watchPage(page: Page, origin: string, expected?: RegExp): PageWatch {
  const watch: PageWatch = { problems: [], elsewhere: [] };
  page.on("pageerror", (error) => watch.problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && !(expected?.test(message.text()) ?? false)) {
      watch.problems.push(`console: ${message.text()}`);
    }
  });
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.protocol !== "blob:" && url.origin !== origin) watch.elsewhere.push(request.url());
  });
  return watch;
}

/** Signs in with the gateway's internal token and waits for the workspace list. */
export async function signInToConsole(page: Page, context: TestGateway): Promise<void> {
  await page.goto(`${context.url}/console`);
  await page.fill("#token", context.gateway.internalSecret);
  await page.click("form.sign-in button[type=submit]");
  await page.locator(`tr[data-workspace-id="${context.workspaceId}"]`).waitFor();
}
