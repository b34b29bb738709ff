/**
 * Schema versions, applied in order on open. A migration is never edited once released: a
 * change is a new entry. Each runs in the same write transaction as its version record, so a
 * crash leaves the schema at one version or the next, never between.
 */
export const MIGRATIONS = [
    // 1: accounts, keys, submissions
    [
        `CREATE TABLE accounts (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL UNIQUE,
      created_at TEXT NOT NULL
    )`,
        `CREATE TABLE api_keys (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL REFERENCES accounts (id),
      kind TEXT NOT NULL CHECK (kind IN ('secret', 'publishable')),
      hash TEXT NOT NULL,
      domains TEXT NOT NULL,
      created_at TEXT NOT NULL,
      revoked_at TEXT
    )`,
        `CREATE TABLE submissions (
      account_id TEXT NOT NULL,
      id TEXT NOT NULL,
      popup_id TEXT NOT NULL,
      domain TEXT NOT NULL,
      device TEXT NOT NULL,
      user_agent TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('pending', 'completed')),
      created_at INTEGER NOT NULL, -- epoch milliseconds: compact, and range filters compare numbers
      data TEXT NOT NULL,          -- the JSON object as the visitor sent it
      PRIMARY KEY (account_id, id)
    )`,
        // One index per equality filter, each ending in the list order (created_at, id), so every
        // filter and both orders are served by an index walk (forwards or backwards), never a scan
        // of the table. Combined filters start from one of them.
        `CREATE INDEX submissions_by_time ON submissions (account_id, created_at, id)`,
        `CREATE INDEX submissions_by_popup ON submissions (account_id, popup_id, created_at, id)`,
        `CREATE INDEX submissions_by_domain ON submissions (account_id, domain, created_at, id)`,
        `CREATE INDEX submissions_by_device ON submissions (account_id, device, created_at, id)`,
        `CREATE INDEX submissions_by_status ON submissions (account_id, status, created_at, id)`,
    ],
];
