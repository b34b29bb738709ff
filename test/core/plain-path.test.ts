import { test } from "uvu";
import * as assert from "uvu/assert";
import { parsedOrigin, plainPathOf } from "../../src/http/plain-path.ts";

/** What the URL parser makes of `href`: the path and the knowledge that there is no query or fragment, or undefined. */
function parsedPlainPath(href: string): string | undefined {
  if (!URL.canParse(href)) return undefined;
  const url = new URL(href);
  return url.search === "" && url.hash === "" && (url.protocol === "http:" || url.protocol === "https:") ? url.pathname : undefined;
}

const ORIGINS = [
  "http://localhost:8787", "https://formsink.test", "http://Example.COM", "http://127.0.0.1:80", "http://127.1", "http://[::1]:3000",
  "http://u:p@host.test", "http://host.test:99999", "http://256.0.0.1", "http://", "http:/host.test", "ftp://host.test", "http://a b",
  "http://host.test?x", "http://host.test#f", "http://host\\x",
];
const PATHS = [
  "/", "/api/submission", "/api/submission/0189f7a0-0000-7000-8000-000000000000", "/api//submission", "/api/submission/", "/A/B",
  "/a/./b", "/a/../b", "/a/..", "/a/.", "/.", "/..", "/a/.../b", "/a/%2e%2E/b", "/a/.%2e/b", "/a/%41", "/a%2Fb", "//a",
  "/a?", "/a?x=1", "/a?b?c/d", "/a#frag", "/a#", "/a\\b", "/a/b;c=d,e@f:g", "/a/{b}|c^d", "/a b", "/a\tb", "/é", "/a'b\"c", "/a<b>`",
  "/~user/!$&()*+", "/a/b:c", "/%",
];

test("plainPathOf: a path only where the URL parser has that path and no query or fragment", () => {
  for (const origin of ORIGINS) {
    for (const path of PATHS) {
      const href = origin + path;
      const plain = plainPathOf(href);
      if (plain !== undefined) assert.is(plain, parsedPlainPath(href), href);
    }
  }
});

test("plainPathOf: an ordinary request's path; paths the parser changes, queries and fragments left to it", () => {
  assert.is(plainPathOf("http://localhost:8787/api/submission/0189f7a0-0000-7000-8000-000000000000"), "/api/submission/0189f7a0-0000-7000-8000-000000000000");
  assert.is(plainPathOf("https://formsink.test/api//submission/"), "/api//submission/");
  for (const href of [
    "http://localhost/a/../b", "http://localhost/a/%2e%2e/b", "http://localhost/a/.", "http://localhost/a?x=1", "http://localhost/a?",
    "http://localhost/a#f", "http://localhost/a\\b", "http://localhost/a b", "http://localhost/é", "http://localhost/%41",
    "http://host.test?x/a", "http://host.test:99999/a", "http://256.0.0.1/a", "ftp://host.test/a", "http:///a", "/a",
  ]) {
    assert.is(plainPathOf(href), undefined, href);
  }
});

test("parsedOrigin: the origin the URL parser makes; undefined for what it refuses or is not an origin", () => {
  assert.is(parsedOrigin("http", "Example.COM:80"), "http://example.com");
  assert.is(parsedOrigin("http", "Example.COM:80"), "http://example.com", "from the cache");
  assert.is(parsedOrigin("https", "Example.COM:443"), "https://example.com");
  assert.is(parsedOrigin("http", "example.com:443"), "http://example.com:443");
  assert.is(parsedOrigin("http", "127.1"), "http://127.0.0.1");
  assert.is(parsedOrigin("http", "[::1]:3000"), "http://[::1]:3000");
  for (const authority of ["", "host:99999", "256.0.0.1", "a/b", "a?b", "a#b", "a\\b", "a b"]) {
    assert.is(parsedOrigin("http", authority), undefined, authority);
  }
});

test.run();
