/**
 * One account's Idempotency-Key records, each with the JSON text of the submission first
 * stored under it. Records are dropped from the oldest while expired (they come in roughly
 * expiry order, so a create costs no scan of them all), and by the submission they replay
 * when it is deleted.
 */
import type { IdempotencyRecord } from "../../store.ts";

interface StoredRecord extends IdempotencyRecord {
  submissionId: string;
  submissionText: string;
}

export class IdempotencyRecords {
  private readonly byKey = new Map<string, StoredRecord>();
  private readonly keyBySubmission = new Map<string, string>();

  /** The live record for `key` at `now`, after dropping expired ones. */
  live(key: string, now: number): StoredRecord | undefined {
    for (const record of this.byKey.values()) {
      if (record.expiresAt > now) break;
      this.drop(record);
    }
    const record = this.byKey.get(key);
    if (record === undefined || record.expiresAt > now) return record;
    this.drop(record);
    return undefined;
  }

  add(record: IdempotencyRecord, submissionId: string, submissionText: string): void {
    this.byKey.set(record.key, { key: record.key, fingerprint: record.fingerprint, expiresAt: record.expiresAt, submissionId, submissionText });
    this.keyBySubmission.set(submissionId, record.key);
  }

  forgetSubmission(submissionId: string): void {
    const key = this.keyBySubmission.get(submissionId);
    const record = key === undefined ? undefined : this.byKey.get(key);
    if (record) this.drop(record);
  }

  private drop(record: StoredRecord): void {
    this.byKey.delete(record.key);
    this.keyBySubmission.delete(record.submissionId);
  }
}
