import { isbot } from "isbot";
import type { Device } from "./submission.ts";

// Bots come from isbot's maintained list (hundreds of crawlers, previewers and HTTP
// libraries); the device classes are a few rules of our own. Order matters: tablets before
// phones, because Android tablets omit "Mobile" and iPads say "iPad".
const TABLET = /ipad|tablet|kindle|silk\/|playbook|android(?!.*mobile)/i;
const MOBILE = /mobi|iphone|ipod|android|windows phone|blackberry|opera mini/i;
const DESKTOP = /windows nt|macintosh|mac os x|x11|linux|cros/i;

/** How many User-Agents' answers `deviceFromUserAgent` keeps before it starts afresh. */
const REMEMBERED_AT_MOST = 500;

/** The latest User-Agents' answers: a site's creates come from a few browsers' User-Agents over and over. */
const remembered = new Map<string, Device>();

// bench/http.ts (create): isbot's regular expression over a browser's User-Agent costs a
// noticeable share of a create's CPU; a Map lookup of an answer already given costs little.
/** The device class a User-Agent string announces; `unknown` when it is empty or says nothing. */
export function deviceFromUserAgent(userAgent: string): Device {
  let device = remembered.get(userAgent);
  if (device === undefined) {
    if (remembered.size >= REMEMBERED_AT_MOST) remembered.clear();
    device = deviceAnnounced(userAgent);
    remembered.set(userAgent, device);
  }
  return device;
}

/** `deviceFromUserAgent`'s answer, worked out afresh. */
function deviceAnnounced(userAgent: string): Device {
  if (userAgent.trim() === "") return "unknown";
  if (isbot(userAgent)) return "bot";
  if (TABLET.test(userAgent)) return "tablet";
  if (MOBILE.test(userAgent)) return "mobile";
  if (DESKTOP.test(userAgent)) return "desktop";
  return "unknown";
}
