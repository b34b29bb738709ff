// Order matters: bots first (many crawlers also say "Mobile"), then tablets (Android tablets
// omit "Mobile", iPads say "iPad"), then phones, then anything that names a desktop OS.
const BOT = /bot\b|crawl|spider|slurp|facebookexternalhit|headless|lighthouse|curl\/|wget\/|python-requests|httpclient|okhttp|go-http-client|axios\/|node-fetch|undici|postman/i;
const TABLET = /ipad|tablet|kindle|silk\/|playbook|android(?!.*mobile)/i;
const MOBILE = /mobi|iphone|ipod|android|windows phone|blackberry|opera mini/i;
const DESKTOP = /windows nt|macintosh|mac os x|x11|linux|cros/i;
/** The device class a User-Agent string announces; `unknown` when it is empty or says nothing. */
export function deviceFromUserAgent(userAgent) {
    if (userAgent.trim() === "")
        return "unknown";
    if (BOT.test(userAgent))
        return "bot";
    if (TABLET.test(userAgent))
        return "tablet";
    if (MOBILE.test(userAgent))
        return "mobile";
    if (DESKTOP.test(userAgent))
        return "desktop";
    return "unknown";
}
