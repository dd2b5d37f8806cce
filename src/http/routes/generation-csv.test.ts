import assert from "node:assert/strict";
import { test } from "node:test";
import { formatCsvField } from "./generation-csv.js";

test("CSV fields: quoted when they hold a comma, quote or line break; formulas defused in text", () => {
  assert.equal(formatCsvField("plain"), "plain");
  assert.equal(formatCsvField("a,b"), '"a,b"');
  assert.equal(formatCsvField('say "hi"'), '"say ""hi"""');
  assert.equal(formatCsvField("two\nlines"), '"two\nlines"');
  assert.equal(formatCsvField("cr\rhere"), '"cr\rhere"');
  assert.equal(formatCsvField(null), "");
  assert.equal(formatCsvField(undefined), "");
  assert.equal(formatCsvField(0), "0");
  assert.equal(formatCsvField(false), "false");
  // Text a spreadsheet would run gets a leading quote; numbers never do.
  assert.equal(formatCsvField("=1+1", true), "'=1+1");
  assert.equal(formatCsvField("+cli/1.0", true), "'+cli/1.0");
  assert.equal(formatCsvField("-x", true), "'-x");
  assert.equal(formatCsvField("@sum", true), "'@sum");
  assert.equal(formatCsvField("\tx", true), "'\tx");
  assert.equal(formatCsvField('=HYPERLINK("u", "a,b")', true), `"'=HYPERLINK(""u"", ""a,b"")"`);
  assert.equal(formatCsvField(-5), "-5");
  assert.equal(formatCsvField("ok-model", true), "ok-model");
});
