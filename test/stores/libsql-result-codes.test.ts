/**
 * libSQL names SQLite's extended result codes (`SQLITE_BUSY_RECOVERY`, `SQLITE_IOERR_FSYNC`):
 * the file store and the CLI must read them as their primary code, or a lock met while another
 * connection recovers a WAL fails a read at once instead of being waited out (a restore did),
 * and a disk error is not reported as one.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { storageProblem } from "../../cli/database.ts";
import { primaryResultCode } from "../../src/stores/libsql/file.ts";

test("an extended code is read as its primary code", () => {
  assert.is(primaryResultCode({ code: "SQLITE_BUSY_RECOVERY" }), "SQLITE_BUSY");
  assert.is(primaryResultCode({ code: "SQLITE_BUSY" }), "SQLITE_BUSY");
  assert.is(primaryResultCode({ code: "SQLITE_LOCKED_SHAREDCACHE" }), "SQLITE_LOCKED");
  assert.is(primaryResultCode({ code: "SQLITE_IOERR_FSYNC" }), "SQLITE_IOERR");
  assert.is(primaryResultCode({ code: "ECONNRESET" }), "ECONNRESET");
  assert.is(primaryResultCode(new Error("no code")), undefined);
  assert.is(primaryResultCode(null), undefined);
});

test("the CLI reports a storage fault whose code is extended", () => {
  const fsync = Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR_FSYNC" });
  assert.is(storageProblem(fsync), "the disk failed to read or write (disk I/O error)");
  const moved = Object.assign(new Error("attempt to write a readonly database"), { code: "SQLITE_READONLY_DBMOVED" });
  assert.match(storageProblem(moved) ?? "", /cannot be written/);
  assert.is(storageProblem(Object.assign(new Error("x"), { code: "SQLITE_CONSTRAINT_UNIQUE" })), undefined);
});

test.run();
