/**
 * The data bench/correlated.ts runs on: one account whose filter fields are correlated, as real
 * accounts' are, so that some combinations match millions, some a handful and some nothing.
 * Seeded, so every run has the same rows.
 *
 * - popupId: 12 popups, skewed (`popup_0` takes about a third, `popup_11` a few hundred rows).
 * - `popup_7`'s leads are all completed: `popupId=popup_7&status=pending` matches nothing.
 * - `popup_3` never runs on `site1.example`: `popupId=popup_3&domain=site1.example` matches nothing.
 * - device `bot`: a handful of rows in the whole account.
 * - status: otherwise pending 70%, completed 30%.
 * - createdAt: ascending over a year, ids UUIDv7 of that time.
 */
import type { KeyStore, SubmissionStore } from "../../src/store.ts";
import type { Device, Submission } from "../../src/submission.ts";
import { DATASET_SPAN_MS, DATASET_START, pick, seededRandom, uuidv7 } from "./dataset.ts";

export const CORRELATED_POPUPS = Array.from({ length: 12 }, (_, i) => `popup_${i}`);
export const CORRELATED_DOMAINS = ["site0.example", "site1.example", "site2.example", "site3.example", "site4.example", "site5.example"];
export const CORRELATED_DEVICES: readonly Device[] = ["desktop", "mobile", "tablet", "bot"];
export const CORRELATED_STATUSES = ["pending", "completed"] as const;

const POPUP_WEIGHTS = [3300, 2000, 1400, 1000, 700, 500, 400, 300, 200, 120, 50, 3];
const DOMAIN_WEIGHTS = [35, 25, 15, 12, 8, 5];
/** Of the devices but `bot`, which comes only as the handful below. */
const DEVICE_WEIGHTS = [55, 40, 5];
/** Rows in a million that are bots. */
const BOTS_PER_MILLION = 12;

/** The account the data set is imported into. */
export const CORRELATED_ACCOUNT = "correlated";
const IMPORT_BATCH = 5000;

const ALL_COMPLETED = "popup_7";
const NEVER_ON = { popupId: "popup_3", domain: "site1.example" };

/** `count` submissions in ascending `createdAt` order, spread over a year. */
export function* correlatedSubmissions(count: number, seed = 18): Generator<Submission> {
  const random = seededRandom(seed);
  const step = DATASET_SPAN_MS / count;
  const botEvery = Math.max(1, Math.floor(1_000_000 / BOTS_PER_MILLION));
  for (let i = 0; i < count; i++) {
    const millis = DATASET_START + Math.floor(i * step);
    const popupId = pick(CORRELATED_POPUPS, POPUP_WEIGHTS, random());
    let domain = pick(CORRELATED_DOMAINS, DOMAIN_WEIGHTS, random());
    if (popupId === NEVER_ON.popupId && domain === NEVER_ON.domain) domain = CORRELATED_DOMAINS[0]!;
    const device = i % botEvery === botEvery - 1 ? "bot" : pick(CORRELATED_DEVICES.slice(0, 3), DEVICE_WEIGHTS, random());
    const status = popupId === ALL_COMPLETED || random() < 0.3 ? "completed" : "pending";
    yield {
      submissionId: uuidv7(millis, random),
      popupId,
      data: { email: `lead${i}@example.com`, name: `Lead ${i}`, message: "Please send me the spring catalogue.", consent: random() < 0.7 },
      domain,
      userAgent: device === "bot" ? "Mozilla/5.0 (compatible; Googlebot/2.1)" : "Mozilla/5.0 (X11; Linux x86_64) Chrome/126.0",
      device,
      status,
      createdAt: new Date(millis).toISOString(),
    };
  }
}

/**
 * Every filter combination over the data set's values: each of the four fields absent or any
 * of its values (12 popups, 6 domains, 4 devices, 2 statuses, and one value no row has).
 */
export function everyFilterCombination(): Array<Partial<Pick<Submission, "popupId" | "domain" | "device" | "status">>> {
  const choices = <T>(values: readonly T[]) => [undefined, ...values];
  const combinations: Array<Partial<Pick<Submission, "popupId" | "domain" | "device" | "status">>> = [];
  for (const popupId of choices([...CORRELATED_POPUPS, "popup_none"]))
    for (const domain of choices(CORRELATED_DOMAINS))
      for (const device of choices(CORRELATED_DEVICES))
        for (const status of choices(CORRELATED_STATUSES))
          combinations.push({
            ...(popupId === undefined ? {} : { popupId }),
            ...(domain === undefined ? {} : { domain }),
            ...(device === undefined ? {} : { device }),
            ...(status === undefined ? {} : { status }),
          });
  return combinations;
}

/** Imports `count` rows of the data set into the account `CORRELATED_ACCOUNT`; returns its id. */
export async function importCorrelated(store: SubmissionStore & KeyStore, count: number): Promise<string> {
  const accountId = (await store.ensureAccount(CORRELATED_ACCOUNT)).id;
  let batch: Submission[] = [];
  for (const submission of correlatedSubmissions(count)) {
    batch.push(submission);
    if (batch.length === IMPORT_BATCH) {
      await store.importSubmissions(accountId, batch);
      batch = [];
    }
  }
  if (batch.length > 0) await store.importSubmissions(accountId, batch);
  return accountId;
}
