/**
 * The data every issue-6 benchmark runs on, made the same way each time (a seeded generator):
 * realistic leads of a few hundred bytes, spread over a year, with independent equality
 * fields so every filter combination has matches of a different size.
 *
 * - popupId: 10 popups, uneven (popup_0 takes ~19%, popup_9 ~1%)
 * - domain: 5 domains, uneven
 * - device: desktop 55%, mobile 40%, tablet 4%, bot 1%
 * - status: completed 30%, pending 70%
 * - createdAt: ascending with the index, a year's span whatever the count; ids are UUIDv7 of
 *   that time, as the handler makes them.
 */
import type { Device, Submission } from "../../src/submission.ts";

export const POPUPS = Array.from({ length: 10 }, (_, i) => `popup_${i}`);
export const DOMAINS = ["example.com", "shop.example.com", "blog.example.com", "example.org", "landing.example.net"];
export const DEVICES: readonly Device[] = ["desktop", "mobile", "tablet", "bot"];
export const STATUSES = ["pending", "completed"] as const;

const POPUP_WEIGHTS = [19, 16, 14, 12, 10, 9, 8, 6, 5, 1];
const DOMAIN_WEIGHTS = [40, 25, 20, 10, 5];
const DEVICE_WEIGHTS = [55, 40, 4, 1];
const STATUS_WEIGHTS = [70, 30];

/** 2025-01-01T00:00:00Z: every data set starts here and spans one year. */
export const DATASET_START = Date.UTC(2025, 0, 1);
export const DATASET_SPAN_MS = 365 * 24 * 3600 * 1000;

const USER_AGENTS = [
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36",
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
  "Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
  "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
];

/** A small, fast, seeded PRNG (mulberry32): the same seed gives the same data set. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One of `values`, chosen by `random` (0 to 1) with the given weights (one per value). */
export function pick<T>(values: readonly T[], weights: readonly number[], random: number): T {
  const total = weights.reduce((a, b) => a + b, 0);
  let point = random * total;
  for (let i = 0; i < values.length; i++) {
    point -= weights[i]!;
    if (point < 0) return values[i]!;
  }
  return values[values.length - 1]!;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** A UUIDv7 for `millis`, its random bits from `random`. */
export function uuidv7(millis: number, random: () => number): string {
  const time = millis.toString(16).padStart(12, "0");
  const r = () => HEX[Math.floor(random() * 256)]!;
  const variant = HEX[0x80 | Math.floor(random() * 64)]!;
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${r().slice(1)}${r()}-${variant}${r()}-${r()}${r()}${r()}${r()}${r()}${r()}`;
}

/**
 * Yields `count` submissions in ascending `createdAt` order, spread over a year; `seed` picks
 * the data set (use a different one per account).
 */
export function* generateSubmissions(count: number, seed = 1): Generator<Submission> {
  const random = seededRandom(seed);
  const step = DATASET_SPAN_MS / count;
  for (let i = 0; i < count; i++) {
    const millis = DATASET_START + Math.floor(i * step);
    const device = pick(DEVICES, DEVICE_WEIGHTS, random());
    yield {
      submissionId: uuidv7(millis, random),
      popupId: pick(POPUPS, POPUP_WEIGHTS, random()),
      data: {
        email: `visitor${i}@example.com`,
        name: `Visitor ${i}`,
        message: "I would like to hear more about the spring offer, please call me back.",
        consent: random() < 0.7,
        ...(random() < 0.25 ? { phone: "+1 555 0100" } : {}),
      },
      domain: pick(DOMAINS, DOMAIN_WEIGHTS, random()),
      userAgent: USER_AGENTS[DEVICES.indexOf(device)]!,
      device,
      status: pick(STATUSES, STATUS_WEIGHTS, random()),
      createdAt: new Date(millis).toISOString(),
    };
  }
}

/** Every combination of the equality filters (16), each with a value of middling frequency. */
export function equalityFilterCombinations(): Array<Partial<Pick<Submission, "popupId" | "domain" | "device" | "status">>> {
  const values = { popupId: POPUPS[1]!, domain: DOMAINS[1]!, device: "mobile" as Device, status: "completed" as const };
  const fields = Object.keys(values) as (keyof typeof values)[];
  return Array.from({ length: 16 }, (_, mask) =>
    Object.fromEntries(fields.filter((_, bit) => mask & (1 << bit)).map((field) => [field, values[field]])),
  );
}
