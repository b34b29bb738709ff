import { isbot } from "isbot";
import { rememberLatest } from "./latest-answers.ts";
import type { Device } from "./submission.ts";

// Bots come from isbot's maintained list (hundreds of crawlers, previewers and HTTP
// libraries); the device classes are a few rules of our own. Order matters: tablets before
// phones, because Android tablets omit "Mobile" and iPads say "iPad".
const TABLET = /ipad|tablet|kindle|silk\/|playbook|android(?!.*mobile)/i;
const MOBILE = /mobi|iphone|ipod|android|windows phone|blackberry|opera mini/i;
const DESKTOP = /windows nt|macintosh|mac os x|x11|linux|cros/i;

// bench/http.ts (create): isbot's regular expression over a browser's User-Agent costs a
// noticeable share of a create's CPU; a Map lookup of an answer already given costs little, and
// a site's creates come from a few browsers' User-Agents over and over.
/** The device class a User-Agent string announces; `unknown` when it is empty or says nothing. */
export const deviceFromUserAgent: (userAgent: string) => Device = rememberLatest(500, deviceAnnounced);

/** `deviceFromUserAgent`'s answer, worked out afresh. */
function deviceAnnounced(userAgent: string): Device {
  if (userAgent.trim() === "") return "unknown";
  if (isbot(userAgent)) return "bot";
  if (TABLET.test(userAgent)) return "tablet";
  if (MOBILE.test(userAgent)) return "mobile";
  if (DESKTOP.test(userAgent)) return "desktop";
  return "unknown";
}
