import { isbot } from "isbot";
import type { Device } from "./submission.ts";

// Bots come from isbot's maintained list (hundreds of crawlers, previewers and HTTP
// libraries); the device classes are a few rules of our own. Order matters: tablets before
// phones, because Android tablets omit "Mobile" and iPads say "iPad".
const TABLET = /ipad|tablet|kindle|silk\/|playbook|android(?!.*mobile)/i;
const MOBILE = /mobi|iphone|ipod|android|windows phone|blackberry|opera mini/i;
const DESKTOP = /windows nt|macintosh|mac os x|x11|linux|cros/i;

/** The device class a User-Agent string announces; `unknown` when it is empty or says nothing. */
export function deviceFromUserAgent(userAgent: string): Device {
  if (userAgent.trim() === "") return "unknown";
  if (isbot(userAgent)) return "bot";
  if (TABLET.test(userAgent)) return "tablet";
  if (MOBILE.test(userAgent)) return "mobile";
  if (DESKTOP.test(userAgent)) return "desktop";
  return "unknown";
}
