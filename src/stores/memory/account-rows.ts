/**
 * One account's submissions, kept compactly for millions of rows: each row is a slot number
 * into a few columns (its JSON text, its id, its time, its tuple), so a row costs its JSON's
 * bytes outside the JavaScript heap (text-column.ts), one id string and about 60 bytes of
 * arrays (the id index's among them: id-slots.ts), and no object per row for the garbage
 * collector to trace. The rows are indexed twice, both in the list order (createdAt, then id):
 * all of them, and per tuple (see tuples.ts).
 */
import type { Submission, SubmissionStatus } from "../../submission.ts";
import { compareByCodePoint } from "../../text-order.ts";
import { timeOf } from "./created-time.ts";
import { SortedSlots, type Probe, type SlotOrder } from "./sorted-slots.ts";
import { idHash, IdSlots } from "./id-slots.ts";
import { IdentifierIndex } from "./identifiers.ts";
import { detached } from "./strings.ts";
import { textToSubmission } from "./submission-text.ts";
import { TextColumn } from "./text-column.ts";
import { TupleIndex } from "./tuples.ts";

export class AccountRows implements SlotOrder {
  private readonly ids: string[] = [];
  private readonly texts = new TextColumn();
  private times = new Float64Array(256);
  private tupleOfSlot = new Int32Array(256);
  private readonly freeSlots: number[] = [];
  private readonly slotById = new IdSlots(this.ids);
  /** Every data key seen per popup number; deletes do not shrink it (the contract allows more). */
  private readonly dataKeysByPopup: Array<Set<string>> = [];
  readonly all = new SortedSlots(this);
  readonly index = new TupleIndex(this);
  private readonly identifiers: IdentifierIndex;

  constructor(identifyingFields: readonly string[]) {
    this.identifiers = new IdentifierIndex(identifyingFields);
  }

  get size(): number {
    return this.slotById.size;
  }

  compare(a: number, b: number): number {
    return this.times[a]! - this.times[b]! || compareByCodePoint(this.ids[a]!, this.ids[b]!);
  }

  timeAt(slot: number): number {
    return this.times[slot]!;
  }

  isBefore(slot: number, probe: Probe): boolean {
    const time = this.times[slot]!;
    if (time !== probe.time) return time < probe.time;
    if (probe.id === undefined) return probe.tieAfter;
    const byId = compareByCodePoint(this.ids[slot]!, probe.id);
    return byId < 0 || (byId === 0 && probe.tieAfter);
  }

  /** The JSON text of the row with this id, or undefined. */
  textOf(submissionId: string): string | undefined {
    const slot = this.slotById.get(submissionId);
    return slot === undefined ? undefined : this.texts.get(slot);
  }

  /** The row's id and popup id as the rows keep them, to be kept elsewhere without a copy. */
  keptNames(submissionId: string): { id: string; popupId: string } | undefined {
    const slot = this.slotById.get(submissionId);
    return slot === undefined ? undefined : this.namesAt(slot);
  }

  /** The id and popup id of the row in `slot`, as `keptNames` gives them. */
  namesAt(slot: number): { id: string; popupId: string } {
    return { id: this.ids[slot]!, popupId: this.index.popups.values[this.index.tuples[this.tupleOfSlot[slot]!]!.popup]! };
  }

  /** The ids of the rows whose `data[field]` is `value` (see IdentifierIndex). */
  idsByIdentifier(field: string, value: string): string[] {
    const dataAt = (slot: number) => (this.ids[slot] === "" ? undefined : textToSubmission(this.texts.get(slot)).data);
    return this.identifiers.find(field, value, dataAt).map((slot) => this.ids[slot]!);
  }

  /** The number of the tuple (see tuples.ts) of the row in `slot`. */
  tupleAt(slot: number): number {
    return this.tupleOfSlot[slot]!;
  }

  textAt(slot: number): string {
    return this.texts.get(slot);
  }

  /** The place right after the row in `slot`, or right before it, as a probe into any list. */
  probeAt(slot: number, tieAfter: boolean): Probe {
    return { time: this.times[slot]!, id: this.ids[slot]!, tieAfter };
  }

  /**
   * Adds the row and returns its slot, or returns undefined and changes nothing when the account
   * has a row with its id.
   */
  insert(submission: Submission): number | undefined {
    const hash = idHash(submission.submissionId);
    if (this.slotById.get(submission.submissionId, hash) !== undefined) return undefined;
    // everything that can throw on a malformed record comes before the first change
    const time = timeOf(submission);
    this.texts.write(submission);
    const id = detached(submission.submissionId);
    const tuple = this.index.tupleOf(submission);
    const slot = this.freeSlots.pop() ?? this.slotById.size;
    this.ensureCapacity(slot + 1);
    this.ids[slot] = id;
    this.texts.place(slot);
    this.times[slot] = time;
    this.tupleOfSlot[slot] = tuple;
    this.slotById.add(slot, hash);
    this.all.insert(slot);
    this.index.tuples[tuple]!.rows.insert(slot);
    this.noteDataKeys(this.index.tuples[tuple]!.popup, submission.data);
    this.identifiers.add(slot, submission.data);
    return slot;
  }

  /** False when there is no such row. */
  setStatus(submissionId: string, status: SubmissionStatus): boolean {
    const slot = this.slotById.get(submissionId);
    if (slot === undefined) return false;
    const submission = textToSubmission(this.texts.get(slot));
    if (submission.status === status) return true;
    submission.status = status;
    this.texts.write(submission);
    const before = this.index.tuples[this.tupleOfSlot[slot]!]!;
    before.rows.remove(slot);
    const after = this.index.tupleOf(submission);
    this.index.tuples[after]!.rows.insert(slot);
    this.tupleOfSlot[slot] = after;
    this.texts.place(slot);
    return true;
  }

  /** False when there is no such row. */
  delete(submissionId: string): boolean {
    const slot = this.slotById.get(submissionId);
    if (slot === undefined) return false;
    this.identifiers.remove(slot);
    this.all.remove(slot);
    this.index.tuples[this.tupleOfSlot[slot]!]!.rows.remove(slot);
    this.slotById.remove(slot);
    this.ids[slot] = "";
    this.texts.remove(slot);
    this.freeSlots.push(slot);
    return true;
  }

  /** Every data key the rows of this popup (of every popup when undefined) ever had. */
  dataKeys(popupId: string | undefined): Set<string> {
    if (popupId !== undefined) {
      const popup = this.index.popups.numberOf(popupId);
      return (popup !== undefined && this.dataKeysByPopup[popup]) || new Set();
    }
    return new Set(this.dataKeysByPopup.flatMap((keys) => (keys ? [...keys] : [])));
  }

  private noteDataKeys(popup: number, data: Submission["data"]): void {
    const keys = (this.dataKeysByPopup[popup] ??= new Set());
    for (const key in data) if (!keys.has(key)) keys.add(detached(key));
  }

  private ensureCapacity(slots: number): void {
    if (slots <= this.times.length) return;
    const capacity = Math.max(slots, this.times.length * 2);
    const times = new Float64Array(capacity);
    times.set(this.times);
    this.times = times;
    const tuples = new Int32Array(capacity);
    tuples.set(this.tupleOfSlot);
    this.tupleOfSlot = tuples;
    this.identifiers.ensureCapacity(capacity);
    this.texts.ensureCapacity(capacity);
  }
}
