/**
 * A released migration's SQL never changes: a database made new runs it as it is today, one made
 * before ran it as it was then, and the two must end with the same schema. Each migration's
 * statements are pinned here by a digest. A new migration is pinned as it is written (the
 * failure prints its digest), and again after each change until it is merged. A digest that no
 * longer matches means a released migration's text moved, most often because it was built from
 * a value the live code changed: give the migration a frozen copy of what it read.
 */
import { createHash } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { EQUALITY_COLUMNS } from "../../src/stores/sql/counting.ts";

/** SHA-256 of each SQL store migration's statements joined by `\n;\n`, from migration 1. */
const SQL_STORE = [
  "d287e6df98c4dbd78838d6206d2d9d6476a3d33d0177fa297391d5d1874dbf56", // 1
  "9b9b5179d0794891bea952b692c5266b34c38bd1c5a0ebe146cefb988d390782", // 2
  "1a02a7cb6a66ae07090673f9147fe6d4f98057698ca12adc085fa5b51a8168af", // 3
  "c8aae8faa3856d6a30db4c6a5c188f7e2586a2e5cba8ca91e85ad7f05a6d6bc0", // 4
  "4fe851eb99186942577a7de2c0fbf8be04d9a8f7c05d8ea6b3cd551de955d101", // 5
  "473037fd48bab47ddfea429d3123a8ca5de925bb195dafa73c87106056e3ccb0", // 6
  "28a88c03924f375744fa80860da124856a3841e97e616167d1fc365ad2c88fe4", // 7
  "7fddce37e9fb7742a1956d87b8b0637322acfb9063a02bd924264e1c9588afc3", // 8
  "45684fae1673421ee8737d2a53f341c9b71ea4607ad19b97872a564ecf056692", // 9
  "5811500c69bbf65eb43ad8c1094fa06406b868b24568dd3cdc9201378fe9ec66", // 10
  "e1ac556cfc56aac8b9032ad33e47bca24e110657c9702cbd939297c7e2b4133d", // 11
  "0fc567c77969cfc094fa8c1f56e3452ef05f34a897c2372505b9dd131cf26f61", // 12
  "329bd9c44d5375509cd02a5bcc9b4f0737d031edabb832fd1ce4da8197e04462", // 13
  "4cdb55dac6467d98ba0971222a2b04c8a718304a2754d35af88b9a4e6267db0f", // 14
  "d6a5ba77bddaf7ae619ad31378bccd783328b2a529e34eeb6096876e355516a9", // 15
  "974b66c3e4652ffb035aebc185256128313fc68b21fc0a6ad88fdf788723866b", // 16
  "44721041b41d34de82c41bb28364e69b6fa810b38c3f5a7f618a34739b8bc9ba", // 17
  "f5c767059ea96f423b3420d0e5ef158fe0a5abb2ba9cd27f721876b08d95ee02", // 18
  "d3aca95e6e437f7df7e5206e7e31965c75fc841e3f2eccc048a3721972330a35", // 19
  "3f6b93b5bb48eb779b33f34a6cfb3bcbffab8f8b8aefd72070aca3bb1b2302fd", // 20
  "043c7f75c510d195aaedc248ae7a44e0f8ec11c16662ab13f36e446d64b6b5b3", // 21
  "18ca73b3baf9c881ee96a78c858ad592b86190309f5aa75f20152317193b1d68", // 22
];

/** The same of each PostgreSQL store migration. */
const POSTGRES_STORE = [
  "98d61a2fc79ba98110dc23599050bf10d0cc73b0db494d975327ceaa3197dba3", // 1
  "5d906e210a1fe9744c3d13e66796c4b8bd53a41946037e09b24e7897163b996c", // 2
  "c4ca7c1a062f9c719c84eba8bf99dcfa9c81c54744ed7470d4ebbf043c5ce4d1", // 3
  "ebbd1c03df3f7b1cf96cfc2ef69c6a2d02b31c1f4de08fe5d46e40054a38cc6f", // 4
  "317824b0dabe58af31463a9eb692186f5a7bfa7fb26ccbba034483140946040e", // 5
  "4ed7d97b36cb251f467fd28c98adc2ea6f8a9df8988f40302c5c474f3239d42e", // 6
  "80233a099454d249de9b2a1dc80f6d415f5a12c5969943d31fd26fdb50c44d31", // 7
  "c3fa1685c228680cb15fb8a37ef2eef860da7345d7648c1c8db02e9834b2ffee", // 8
  "67dd22967809211b30afe1422e3931296f5b75b71d379ab725624171f3fafc95", // 9
];

function digests(migrations: readonly (readonly string[])[]): string[] {
  return migrations.map((statements) => createHash("sha256").update(statements.join("\n;\n")).digest("hex"));
}

function assertPinned(store: string, migrations: readonly (readonly string[])[], pinned: readonly string[]): void {
  const now = digests(migrations);
  for (const [i, digest] of now.entries()) {
    if (i >= pinned.length) assert.unreachable(`${store} migration ${i + 1} is not pinned: add "${digest}" to the list (again after each change until it is merged)`);
    assert.is(digest, pinned[i], `${store} migration ${i + 1} is released and its SQL changed: never edit a released migration; a change is a new migration`);
  }
  assert.is(now.length, pinned.length, `${store}: a pinned migration is gone`);
}

test("every released migration's SQL is what it was when released, in the SQL store and in PostgreSQL", async () => {
  // A filter added to the live list (as docs/development.md's "A filter of the submission list"
  // adds one) before the migrations are built: they count the columns they counted when released.
  (EQUALITY_COLUMNS as Record<string, string>).referrer = "referrer";
  try {
    const { MIGRATIONS } = await import("../../src/stores/sql/migrations.ts");
    const { POSTGRES_MIGRATIONS } = await import("../../src/stores/postgres/migrations.ts");
    assertPinned("SQL store", MIGRATIONS, SQL_STORE);
    assertPinned("PostgreSQL store", POSTGRES_MIGRATIONS, POSTGRES_STORE);
  } finally {
    delete (EQUALITY_COLUMNS as Record<string, string>).referrer;
  }
});

test.run();
