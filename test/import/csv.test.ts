import { suite } from "uvu";
import * as assert from "uvu/assert";
import { csvHeader, csvRecord, csvRecordFromParts, decodeDataValue, encodeDataValue, neutralise, unneutralise } from "../../src/export/csv.ts";
import { readCsvRows } from "../../src/import/csv-reader.ts";
import { awkwardSubmissions, chunked, collect, records, submissionsOf } from "./support.ts";

const writing = suite("CSV: writing");

writing("RFC 4180: CRLF rows; fields with a comma, quote, CR or LF are quoted with quotes doubled", () => {
  const submission = awkwardSubmissions().find((s) => s.data.text === 'a "b" c')!;
  const row = csvRecord({ ...submission, popupId: "a,b", domain: "line\nbreak", userAgent: 'say "hi"' }, ["text"]);
  assert.ok(row.endsWith("\r\n"));
  assert.ok(row.startsWith(`${submission.submissionId},"a,b","line\nbreak","say ""hi""",desktop,pending,${submission.createdAt},"a ""b"" c"`), row);
  assert.is(csvHeader(["email", "x,y"]), 'submissionId,popupId,domain,userAgent,device,status,createdAt,data.email,"data.x,y"\r\n');
});

writing("formula injection: a cell that starts with = + - @ tab, CR or NUL gets a leading quote; plain numbers do not", () => {
  for (const text of ["=1+2", "+1", "-1+1", "@SUM(A1)", "\tx", "\rx", "\0=1+1", "-", "=", "=cmd|' /C calc'!A0"]) {
    assert.is(neutralise(text), `'${text}`, JSON.stringify(text));
    assert.is(unneutralise(neutralise(text)), text);
  }
  for (const text of ["-5", "-0.25", "-1e5", "abc", "", " =x", "1+1"]) assert.is(neutralise(text), text, JSON.stringify(text));
  // a leading quote of its own is doubled, so that reading can always drop one
  assert.is(neutralise("'x"), "''x");
  assert.is(unneutralise("''x"), "'x");
  const row = csvRecord({ ...awkwardSubmissions()[0]!, userAgent: "=HYPERLINK(\"http://evil\")", data: { a: "@x", b: -5, c: "-5", d: "\0@x" } }, ["a", "b", "c", "d"]);
  assert.match(row, /,"'=HYPERLINK\(""http:\/\/evil""\)",/);
  assert.ok(row.endsWith(`,'@x,-5,"""-5""",'\0@x\r\n`), JSON.stringify(row));
});

writing("data strings: the formula guard and the quoting together, each as the other would have them alone", () => {
  const data = {
    a: "=1,2", b: "'q\"", c: "＋x,y", d: "\tx", e: "plain, with comma", f: 'say "hi"', g: "ünïcode ✓", h: "\rx", i: "@a\nb", j: "－1", k: "-1,5",
  };
  const row = csvRecord({ ...awkwardSubmissions()[0]!, data }, Object.keys(data));
  assert.ok(row.endsWith(`,"'=1,2","''q""","'＋x,y",'\tx,"plain, with comma","say ""hi""",ünïcode ✓,"'\rx","'@a\nb",'－1,"'-1,5"\r\n`), row);
});

writing("a data string's cell, whatever its first character: its text (or JSON), guarded, then quoted if it must be", () => {
  const base = awkwardSubmissions()[0]!;
  const firsts = [...Array.from({ length: 0x80 }, (_, unit) => String.fromCharCode(unit)), "＝", "＋", "－", "＠", "é", "✓", "\u{1F600}"];
  for (const first of firsts) {
    for (const text of [first, `${first}x`, `${first}1`, `${first}a,b`, `${first}"q"`, `${first}\n`]) {
      const written = neutralise(encodeDataValue(text));
      const expected = /[",;\r\n]/.test(written) ? `"${written.replaceAll('"', '""')}"` : written;
      const row = csvRecord({ ...base, data: { a: text } }, ["a"]);
      assert.ok(row.endsWith(`,${expected}\r\n`), JSON.stringify([text, row]));
      assert.is(decodeDataValue(unneutralise(expected.startsWith('"') ? expected.slice(1, -1).replaceAll('""', '"') : expected)), text);
    }
  }
});

writing("a record from a store's CSV parts is csvRecord's, whatever the popup's and the domain's first character", () => {
  const base = { ...awkwardSubmissions()[0]!, userAgent: "Mozilla/5.0 (X11, Linux)", data: { a: "=x", b: 1 } };
  const firsts = [...Array.from({ length: 0x80 }, (_, unit) => String.fromCharCode(unit)), "＝", "＋", "－", "＠", "é", "\u{1F600}"];
  // what the parts may not hold: a comma, a quote, a line break
  for (const first of firsts.filter((char) => !/[,"\r\n]/.test(char))) {
    for (const [popupId, domain] of [[`${first}x`, "example.com"], ["popup", `${first}1`], [first, first], ["", ""], [`a;${first}`, `b;${first}`]]) {
      const submission = { ...base, popupId: popupId!, domain: domain! };
      const fields = `${submission.submissionId},${popupId},${domain},`;
      const record = csvRecordFromParts(fields, submission.userAgent, `${submission.device},${submission.status},`, Date.parse(submission.createdAt), submission.data, ["a", "b", "c"]);
      assert.is(record, csvRecord(submission, ["a", "b", "c"]), JSON.stringify([popupId, domain]));
    }
  }
});

writing("data keys named like an object's built-in members are columns like any other: empty where a submission has no such key, its value where it has", () => {
  const keys = ["__proto__", "constructor", "toString", "valueOf", "hasOwnProperty", "yes", "no"];
  const none = csvRecord({ ...awkwardSubmissions()[0]!, data: {} }, keys);
  assert.ok(none.endsWith(`${awkwardSubmissions()[0]!.createdAt},,,,,,,\r\n`), none);
  const own = JSON.parse('{"__proto__":"p","constructor":"c","toString":1,"valueOf":null,"hasOwnProperty":[1],"yes":true,"no":false}') as Record<string, never>;
  const row = csvRecord({ ...awkwardSubmissions()[0]!, data: own }, keys);
  assert.ok(row.endsWith(`,p,c,1,null,[1],true,false\r\n`), row);
});

writing("a cell holding a semicolon is quoted: a spreadsheet splitting on semicolons would start a cell inside it", () => {
  const hostile = "x;=1+1;";
  const submission = { ...awkwardSubmissions()[0]!, popupId: hostile, domain: "d;", userAgent: "Mozilla/5.0 (X11; Linux)", data: { a: hostile, b: ";" } };
  const row = csvRecord(submission, ["a", "b"]);
  assert.ok(row.startsWith(`${submission.submissionId},"x;=1+1;","d;","Mozilla/5.0 (X11; Linux)",`), row);
  assert.ok(row.endsWith(`,"x;=1+1;",";"\r\n`), row);
  assert.is(csvHeader(["a;b"]), 'submissionId,popupId,domain,userAgent,device,status,createdAt,"data.a;b"\r\n');
});

writing("formula injection: the fullwidth ＝ ＋ － ＠ that some spreadsheets take for = + - @ are neutralised too, and read back", () => {
  for (const text of ["＝1+1", "＋1", "－1", "＠SUM(A1)"]) {
    assert.is(neutralise(text), `'${text}`, JSON.stringify(text));
    assert.is(unneutralise(neutralise(text)), text);
  }
  const row = csvRecord({ ...awkwardSubmissions()[0]!, userAgent: "＝HYPERLINK(1)", data: { a: "＝1+1" } }, ["a"]);
  assert.match(row, /,'＝HYPERLINK\(1\),/);
  assert.ok(row.endsWith(",'＝1+1\r\n"), row);
  assert.is(decodeDataValue(unneutralise("'＝1+1")), "＝1+1");
});

writing("data values: plain text when it reads back as itself, JSON otherwise, empty when absent", () => {
  const cases: [unknown, string][] = [
    ["jane@example.com", "jane@example.com"], ["", '""'], ["1", '"1"'], ["true", '"true"'], ["null", '"null"'], ['"q"', '"\\"q\\""'],
    ["[x", '"[x"'], ["{x", '"{x"'], [" 1", " 1"], [1, "1"], [-2.5, "-2.5"], [true, "true"], [null, "null"], [[1, "a"], '[1,"a"]'],
    [{ a: { b: 1 } }, '{"a":{"b":1}}'], [undefined, ""],
  ];
  for (const [value, cell] of cases) {
    assert.is(encodeDataValue(value as never), cell, JSON.stringify(value));
    assert.equal(decodeDataValue(cell), value, cell);
  }
});

const reading = suite("CSV: reading");

reading("rows with quoted commas, quotes and line breaks, and their first line, at every chunk boundary", async () => {
  const text = 'a,b,c\r\n"x, y","say ""hi""","two\r\nlines"\r\nplain,,\n\n"",last,"\n"\r\n';
  const expected = [
    { line: 1, cells: ["a", "b", "c"] },
    { line: 2, cells: ["x, y", 'say "hi"', "two\r\nlines"] },
    { line: 4, cells: ["plain", "", ""] },
    { line: 6, cells: ["", "last", "\n"] },
  ];
  for (const size of [1, 2, 3, 7, text.length]) assert.equal(await collect(readCsvRows(chunked(text, size))), expected, `chunks of ${size}`);
  // no line end after the last row, and a byte order mark at the start
  assert.equal(await collect(readCsvRows(chunked("\uFEFFa,b\r\n1,2", 1))), [{ line: 1, cells: ["a", "b"] }, { line: 2, cells: ["1", "2"] }]);
});

reading("a row that breaks the quoting rules is an error for its line; the next line reads on", async () => {
  const rows = await collect(readCsvRows(chunked('a,b\nx"y,1\n"ok",2\n"closed"after,3\nfine,4\n"never closed,5\n6,7\n')));
  assert.equal(rows, [
    { line: 1, cells: ["a", "b"] },
    { line: 2, error: "a quote inside a field that does not start with one (line 2); quote the whole field and double the quote" },
    { line: 3, cells: ["ok", "2"] },
    { line: 4, error: "text after the closing quote of a field (line 4)" },
    { line: 5, cells: ["fine", "4"] },
    { line: 6, error: "a quoted field that starts on line 6 is never closed" },
  ]);
});

reading("the export's CSV reads back to exactly the submissions written, whatever their text", async () => {
  const submissions = awkwardSubmissions();
  const keys = [...new Set(submissions.flatMap((s) => Object.keys(s.data)))].sort();
  const text = csvHeader(keys) + submissions.map((s) => csvRecord(s, keys)).join("");
  for (const size of [1, 5, 64, text.length]) {
    assert.equal(submissionsOf(await records("csv", text, size)), submissions, `chunks of ${size}`);
  }
});

reading("a header that is not the export's, a row of the wrong width, and bad JSON cells are errors with their line", async () => {
  const header = "submissionId,popupId,domain,userAgent,device,status,createdAt,data.a";
  const row = "0193f5c2-7b8e-7cc1-9a1e-4f1f9d6f0c11,p,d,ua,desktop,pending,2025-07-12T10:30:00.000Z";
  const cases: [string, { line: number; error: RegExp }[]][] = [
    [`${header},extra\n`, [{ line: 1, error: /column "extra" that is neither/ }]],
    ["submissionId,popupId\n", [{ line: 1, error: /lacks the columns domain, userAgent, device, status, createdAt/ }]],
    [`${header},data.a\n`, [{ line: 1, error: /names the column data.a twice/ }]],
    [`${header}\n${row},1\n${row}\n${row},[1\n${row},"""x"\n`, [
      { line: 3, error: /7 cells where the header has 8/ },
      { line: 4, error: /data.a is not valid JSON/ },
      { line: 5, error: /data.a is not valid JSON/ },
    ]],
    [`${header}\n${row.replace("desktop", "phone")},1\n${row.replace("pending", "done")},1\n`, [
      { line: 2, error: /device must be/ },
      { line: 3, error: /status must be/ },
    ]],
  ];
  for (const [text, expected] of cases) {
    const errors = (await records("csv", text)).filter((record) => "error" in record) as { line: number; error: string }[];
    assert.equal(errors.map((e) => e.line), expected.map((e) => e.line), text);
    errors.forEach((error, i) => assert.match(error.error, expected[i]!.error));
  }
});

writing.run();
reading.run();
