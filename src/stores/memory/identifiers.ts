/**
 * The memory store's identifier index: for each identifying field, the ids of the rows whose
 * `data[field]` is each string value (by `identifierKey`), kept by every insert and delete of
 * the account's rows, so that an erasure never reads the rows themselves.
 */
import { identifierKey } from "../../store.ts";
import type { SubmissionData } from "../../submission.ts";
import { detached } from "./strings.ts";

export class IdentifierIndex {
  private readonly idsByValue = new Map<string, Map<string, Set<string>>>();

  constructor(fields: readonly string[]) {
    for (const field of fields) this.idsByValue.set(field, new Map());
  }

  add(submissionId: string, data: SubmissionData): void {
    for (const [field, byValue] of this.idsByValue) {
      const value = data[field];
      if (typeof value !== "string") continue;
      const key = detached(identifierKey(field, value));
      let ids = byValue.get(key);
      if (ids === undefined) byValue.set(key, (ids = new Set()));
      ids.add(submissionId);
    }
  }

  remove(submissionId: string, data: SubmissionData): void {
    for (const [field, byValue] of this.idsByValue) {
      const value = data[field];
      if (typeof value !== "string") continue;
      const key = identifierKey(field, value);
      const ids = byValue.get(key);
      ids?.delete(submissionId);
      if (ids?.size === 0) byValue.delete(key);
    }
  }

  find(field: string, value: string): string[] {
    return [...(this.idsByValue.get(field)?.get(identifierKey(field, value)) ?? [])];
  }
}
