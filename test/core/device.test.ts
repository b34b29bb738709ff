import { test } from "uvu";
import * as assert from "uvu/assert";
import { deviceFromUserAgent } from "../../src/device.ts";

const CASES: [string, string][] = [
  ["Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36", "desktop"],
  ["Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15", "desktop"],
  ["Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0", "desktop"],
  ["Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1", "mobile"],
  ["Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36", "mobile"],
  ["Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1", "tablet"],
  ["Mozilla/5.0 (Linux; Android 13; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36", "tablet"],
  ["Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0", "desktop"],
  ["Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36", "desktop"],
  ["Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Mobile Safari/537.36", "mobile"],
  ["Mozilla/5.0 (Android 14; Mobile; rv:128.0) Gecko/128.0 Firefox/128.0", "mobile"],
  ["Mozilla/5.0 (Linux; Android 9; KFTRWI) AppleWebKit/537.36 (KHTML, like Gecko) Silk/126.3.1 like Chrome/126.0.6478.186 Safari/537.36", "tablet"],
  ["Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "bot"],
  ["Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", "bot"],
  ["facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", "bot"],
  ["Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36 (compatible; Googlebot/2.1)", "bot"],
  ["Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/126.0 Safari/537.36", "bot"],
  ["curl/8.5.0", "bot"],
  // crawlers, previewers and HTTP libraries a short hand-written list missed (isbot's list has them)
  ["WhatsApp/2.23.20.0 A", "bot"],
  ["Java/1.8.0_151", "bot"],
  ["libwww-perl/6.05", "bot"],
  ["Scrapy/2.11.0 (+https://scrapy.org)", "bot"],
  ["Python-urllib/3.11", "bot"],
  ["Mediapartners-Google", "bot"],
  ["Mozilla/5.0 (Unknown; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) PhantomJS/2.1.1 Safari/538.1", "bot"],
  // ... and a phone brand whose name ends in "bot" is still a phone
  ["Mozilla/5.0 (Linux; Android 10; CUBOT X30) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36", "mobile"],
  ["", "unknown"],
  // a bare product/version with no platform is a script to isbot
  ["SomethingElse/1.0", "bot"],
  ["Roku4640X/DVP-7.70 (297.70E04154A)", "unknown"],
];

for (const [userAgent, device] of CASES) {
  test(`${device}: ${userAgent.slice(0, 60) || "(empty)"}`, () => {
    assert.is(deviceFromUserAgent(userAgent), device);
  });
}

test("the same answers when a User-Agent comes again, and after many others", () => {
  for (let round = 0; round < 3; round++) {
    for (const [userAgent, device] of round === 1 ? [...CASES].reverse() : CASES) assert.is(deviceFromUserAgent(userAgent), device, userAgent);
    // more distinct User-Agents than the answers kept, in between the rounds
    for (let i = 0; i < 1200; i++) assert.is(deviceFromUserAgent(`Mozilla/5.0 (iPhone; CPU iPhone OS 17_${i} like Mac OS X) Mobile/15E148 Safari/604.1`), "mobile");
  }
});

test.run();
