import { suite } from "uvu";
import * as assert from "uvu/assert";
import { parseMultipart } from "../../src/http/multipart.ts";

const t = suite("multipart: Content-Disposition parameters");

function fieldsOf(disposition: string): { name: string; filename?: string }[] {
  const body = new TextEncoder().encode(`--b\r\nContent-Disposition: ${disposition}\r\n\r\nv\r\n--b--\r\n`);
  return parseMultipart(body, "multipart/form-data; boundary=b").map(({ name, filename }) => (filename === undefined ? { name } : { name, filename }));
}

t("a quoted name takes backslash escapes (RFC 7578 quoted-string)", () => {
  assert.equal(fieldsOf('form-data; name="a\\"b"'), [{ name: 'a"b' }]);
  assert.equal(fieldsOf('form-data; name="a\\\\b"'), [{ name: "a\\b" }]);
});

t("a backslash a browser leaves unescaped stays as written", () => {
  assert.equal(fieldsOf('form-data; name="C:\\dir"'), [{ name: "C:\\dir" }]);
  assert.equal(fieldsOf('form-data; name="ends\\"'), [{ name: "ends\\" }]);
});

t("name= inside a quoted filename is part of the filename, not the name", () => {
  assert.equal(fieldsOf('form-data; filename="x; name=evil"; name="real"'), [{ name: "real", filename: "x; name=evil" }]);
  assert.equal(fieldsOf('form-data; filename="name=\\"evil\\""; name=real'), [{ name: "real", filename: 'name="evil"' }]);
});

t("parameter names are case-insensitive, spaces around = are allowed, tokens need no quotes", () => {
  assert.equal(fieldsOf("form-data; NAME = email"), [{ name: "email" }]);
  assert.equal(fieldsOf('form-data;name="x";filename*=UTF-8\'\'cv.pdf'), [{ name: "x", filename: "UTF-8''cv.pdf" }]);
});

t("a part whose only name is inside another parameter has no name", () => {
  assert.throws(() => fieldsOf('form-data; filename="name=x"'), /a part has no name/);
});

t.run();
