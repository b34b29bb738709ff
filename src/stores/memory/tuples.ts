/**
 * The equality-filter fields of an account's rows (popupId, domain, device, status), each value
 * kept once and numbered, and one sorted list of rows per combination of the four that occurs
 * (a "tuple"). A filter on any of the fields matches a set of tuples: its total is the sum of
 * their list sizes, kept exact by every insert, delete and status change, and its pages are a
 * merge of their lists.
 */
import type { SubmissionFilter } from "../../store.ts";
import type { Submission } from "../../submission.ts";
import { detached } from "./strings.ts";
import { SortedSlots, type SlotOrder } from "./sorted-slots.ts";

type TupleFields = Pick<Submission, "popupId" | "domain" | "device" | "status">;

/** Numbers the distinct values of one field, in the order they first occur. */
class ValueNumbers {
  private readonly numbers = new Map<string, number>();
  readonly values: string[] = [];

  numberOf(value: string): number | undefined {
    return this.numbers.get(value);
  }

  add(value: string): number {
    let number = this.numbers.get(value);
    if (number === undefined) {
      number = this.values.length;
      const kept = detached(value);
      this.values.push(kept);
      this.numbers.set(kept, number);
    }
    return number;
  }
}

export interface Tuple {
  /** Its place in `TupleIndex.tuples`, which `AccountRows.tupleAt` gives for a row. */
  number: number;
  popup: number;
  domain: number;
  device: number;
  status: number;
  rows: SortedSlots;
}

export class TupleIndex {
  readonly popups = new ValueNumbers();
  private readonly domains = new ValueNumbers();
  private readonly devices = new ValueNumbers();
  private readonly statuses = new ValueNumbers();
  /** The tuple numbers by popup, domain, device and status number, in that nesting: no key to build per row. */
  private readonly numberByValues: number[][][][] = [];
  readonly tuples: Tuple[] = [];

  constructor(private readonly order: SlotOrder) {}

  /** The number of the tuple of `fields`, made on first use. */
  tupleOf(fields: TupleFields): number {
    const popup = this.popups.add(fields.popupId);
    const domain = this.domains.add(fields.domain);
    const device = this.devices.add(fields.device);
    const status = this.statuses.add(fields.status);
    const byStatus = (((this.numberByValues[popup] ??= [])[domain] ??= [])[device] ??= []);
    let number = byStatus[status];
    if (number === undefined) {
      number = this.tuples.length;
      this.tuples.push({ number, popup, domain, device, status, rows: new SortedSlots(this.order) });
      byStatus[status] = number;
    }
    return number;
  }

  /** True when the filter names none of the four fields (every tuple matches). */
  static isUnfiltered(filter: SubmissionFilter): boolean {
    return filter.popupId === undefined && filter.domain === undefined && filter.device === undefined && filter.status === undefined;
  }

  /** The tuples whose rows match the filter's equality fields; none when a value never occurred. */
  matching(filter: SubmissionFilter): Tuple[] {
    const wanted = (values: ValueNumbers, value: string | undefined) => (value === undefined ? -1 : values.numberOf(value) ?? -2);
    const popup = wanted(this.popups, filter.popupId);
    const domain = wanted(this.domains, filter.domain);
    const device = wanted(this.devices, filter.device);
    const status = wanted(this.statuses, filter.status);
    if (popup === -2 || domain === -2 || device === -2 || status === -2) return [];
    return this.tuples.filter(
      (t) => (popup < 0 || t.popup === popup) && (domain < 0 || t.domain === domain) && (device < 0 || t.device === device) && (status < 0 || t.status === status),
    );
  }
}
