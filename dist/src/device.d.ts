import type { Device } from "./submission.js";
/** The device class a User-Agent string announces; `unknown` when it is empty or says nothing. */
export declare function deviceFromUserAgent(userAgent: string): Device;
