/**
 * The screenshots of the console's playground, key editing and audit log pages, taken by
 * scripts/console-screenshots.ts with its gateway, sample workspace and signed-in page.
 */
import type { Page } from "playwright-core";
import type { RunningGateway } from "../src/gateway.js";
import { buildTextChunks, type FakeOpenAiUpstream, fakeReply } from "../test/helpers/fake-openai-upstream.js";

export interface KeyPagesScene {
  page: Page;
  gateway: RunningGateway;
  upstream: FakeOpenAiUpstream;
  workspaceId: string;
  keyId: string;
  model: string;
  shoot(name: string, fullPage?: boolean): Promise<void>;
  shootElement(name: string, selector: string): Promise<void>;
}

export async function shootKeyPages(scene: KeyPagesScene): Promise<void> {
  const { page, gateway, upstream, workspaceId, keyId } = scene;

  // A key being edited: the form prefilled with what the key has now.
  await page.goto(`${gateway.url}/console#/workspaces/${workspaceId}/keys/${keyId}`);
  await page.waitForSelector("form.key-edit");
  await page.fill("form.key-edit input[name=monthly]", "1500");
  await page.fill("form.key-edit input[name=expires]", "2027-06-30T18:00");
  await page.fill("form.key-edit input[name=actor]", "maria");
  await scene.shootElement("key-edit", "form.key-edit");
  await page.click("form.key-edit button[type=submit]");
  await page.getByText("Key saved.").waitFor();

  // The audit log, after a few changes by different people.
  await gateway.admin.updateKey(keyId, { requestsPerMinute: 900, actor: "sam" });
  await gateway.admin.resetKeyTotal(keyId, "maria");
  await page.goto(`${gateway.url}/console#/audit`);
  await page.waitForSelector("tr[data-audit-id]");
  await scene.shoot("audit");

  // Two turns of a conversation in the playground, each streamed.
  const reply = (pieces: string[]) =>
    fakeReply.sse(
      buildTextChunks(pieces, { usage: { prompt_tokens: 420, completion_tokens: 96, total_tokens: 516 } }),
    );
  upstream.enqueue(
    reply(["A gateway sits between ", "your code and the model providers: ", "one API, one bill."]),
  );
  upstream.enqueue(
    reply(["Keys carry daily, monthly and total limits; ", "a request over them is refused."]),
  );
  await page.goto(`${gateway.url}/console#/playground/${workspaceId}`);
  await page.waitForSelector("select[name=model]");
  await page.selectOption("select[name=model]", scene.model);
  for (const [index, text] of ["What does a gateway do?", "And spend limits?"].entries()) {
    await page.fill("textarea[name=prompt]", text);
    await page.click(".composer button[type=submit]");
    await page.locator(".turn.assistant .turn-cost[data-cost-source=record]").nth(index).waitFor();
  }
  await scene.shoot("playground");
}
