/**
 * Schema versions, applied in order on open. A migration is never edited once released: a
 * change is a new entry. Each runs in the same write transaction as its version record, so a
 * crash leaves the schema at one version or the next, never between.
 */
export declare const MIGRATIONS: readonly (readonly string[])[];
