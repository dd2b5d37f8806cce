/**
 * The HTML conversion pool with its real worker threads and real pages: a conversion past its
 * deadline is stopped by terminating its worker, which is replaced; owners take turns and cannot
 * hold every worker; an owner's queue is bounded; a closed pool ends its jobs. The slow page is a
 * real one (megabytes of paragraphs: seconds of parsing and Readability on any machine), so the
 * assertions are about order and counts, not about how fast this machine is.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createHtmlConverter, type HtmlConversion, type HtmlConverter } from "./html-conversion-pool.js";

const small = Buffer.from("<html><head><title>Small</title></head><body><p>tiny page</p></body></html>");
// About 8 MB of paragraphs; the pools below parse all of it (no element bound to speak of).
const huge = Buffer.from(
  `<html><body><article>${"<p>Paragraph with <a href='/x'>a link</a> and <b>bold</b> words in it.</p>".repeat(110_000)}</article></body></html>`,
);
const UNBOUNDED = { maxElements: 10_000_000 };

function job(html: Uint8Array, owner: string, timeoutMs = 60_000) {
  return { html, charset: null, pageUrl: "http://example.com/", owner, timeoutMs };
}

/** Converts, and records the order in which jobs end. */
function tracked(converter: HtmlConverter, endings: string[]) {
  return (name: string, html: Uint8Array, owner: string, timeoutMs?: number): Promise<HtmlConversion> =>
    converter.convert(job(html, owner, timeoutMs)).then((result) => {
      endings.push(name);
      return result;
    });
}

function outcome(result: HtmlConversion): string {
  return result.ok ? result.markdown : result.reason;
}

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  const giveUp = Date.now() + 60_000;
  while (!condition()) {
    if (Date.now() > giveUp) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test("two workers: one owner's slow pages hold one worker and wait in a bounded queue; another owner's page goes first; a page past its deadline is stopped and its worker replaced", async () => {
  // One owner may hold one of the two workers (the default share), two of its pages may wait.
  // The deadline leaves a tiny page seconds to convert on a loaded machine.
  const converter = createHtmlConverter({ workers: 2, timeoutMs: 2_500, perKeyQueued: 2, ...UNBOUNDED });
  const endings: string[] = [];
  const run = tracked(converter, endings);
  try {
    const warm = await converter.convert(job(small, "warm"));
    assert.deepEqual(warm, { ok: true, title: "Small", markdown: "tiny page", readable: true, cut: false });
    await waitFor(() => converter.stats().ready === 2, "both workers");

    const hostile = [run("a1", huge, "a"), run("a2", huge, "a"), run("a3", huge, "a")];
    assert.deepEqual(
      { running: converter.stats().running, queued: converter.stats().queued },
      { running: 1, queued: 2 },
      "one worker for the owner of the slow pages, its other pages waiting",
    );
    const refused = await converter.convert(job(small, "a"));
    assert.deepEqual(refused, {
      ok: false,
      reason: "busy",
      message: "too many pages of this key are waiting to be converted",
    });

    const victim = await run("b", small, "b");
    assert.equal(outcome(victim), "tiny page");
    assert.deepEqual(endings, ["b"], "the other owner's page ended before any slow one");

    // The first slow page is stopped at its deadline and its worker replaced. Until the new one
    // is ready it still counts as the slow pages' owner's: the next slow page does not take the
    // free worker, which another owner's page gets at once.
    assert.equal(outcome(await hostile[0]), "timeout");
    assert.equal(converter.stats().killed, 1);
    assert.equal(converter.stats().workers, 2, "the terminated worker was replaced, not added to");
    assert.deepEqual(
      { running: converter.stats().running, queued: converter.stats().queued },
      { running: 0, queued: 2 },
    );
    assert.equal(outcome(await run("c", small, "c")), "tiny page");
    assert.deepEqual(endings.slice(0, 3), ["b", "a1", "c"]);
    await converter.close();
    await Promise.all(hostile);
  } finally {
    await converter.close();
  }
});

test("one worker: owners take turns, a newcomer before the owner just served; a page that waits past its deadline or its request ends without running", async () => {
  const converter = createHtmlConverter({ workers: 1, timeoutMs: 400, ...UNBOUNDED });
  const endings: string[] = [];
  const run = tracked(converter, endings);
  try {
    await converter.convert(job(small, "warm"));
    const pages = [run("a1", huge, "a"), run("a2", huge, "a"), run("a3", huge, "a")];
    await waitFor(() => converter.stats().running === 1, "a1 to start");
    pages.push(run("b", small, "b"), run("c", small, "c", 200));
    // A page whose request is cancelled while it waits leaves the queue.
    const cancelled = new AbortController();
    const dropped = converter.convert({ ...job(small, "d"), signal: cancelled.signal });
    cancelled.abort();
    assert.equal(outcome(await dropped), "aborted");
    // b is converted by the worker that replaced the one a1 ran on.
    assert.equal(outcome(await pages[3]), "tiny page");
    assert.deepEqual(
      endings.filter((name) => name !== "c"),
      ["a1", "b"],
      "b went after a's first page, not after all three",
    );
    assert.equal(outcome(await pages[4]), "expired");
    assert.equal(outcome(await pages[0]), "timeout");
    assert.equal(converter.stats().killed, 1);
    await converter.close();
    await Promise.all(pages);
  } finally {
    await converter.close();
  }
});

test("a closed converter ends its jobs instead of leaving them waiting", async () => {
  const own = createHtmlConverter({ workers: 1 });
  const pending = own.convert(job(huge, "a"));
  const waiting = own.convert(job(small, "b"));
  await own.close();
  assert.deepEqual(await pending, { ok: false, reason: "closed", message: "converter closed" });
  assert.deepEqual(await waiting, { ok: false, reason: "closed", message: "converter closed" });
  assert.equal((await own.convert(job(small, "a", 1000))).ok, false);
});
