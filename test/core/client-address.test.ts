import { test } from "uvu";
import * as assert from "uvu/assert";
import { addressBucket, connectionAddress, forwardedForAddress } from "../../src/rate-limit/client-address.ts";

test("addressBucket: IPv4 counts as itself, also when mapped into IPv6", () => {
  assert.is(addressBucket("203.0.113.7"), "203.0.113.7");
  assert.is(addressBucket("::ffff:203.0.113.7"), "203.0.113.7");
  assert.is(addressBucket("::FFFF:203.0.113.7"), "203.0.113.7");
});

test("addressBucket: IPv6 counts by its /64, however it is written", () => {
  const bucket = "2001:db8:1:2::/64";
  for (const address of [
    "2001:db8:1:2::1", "2001:0db8:0001:0002:ffff:ffff:ffff:ffff", "[2001:db8:1:2::abcd]", "2001:DB8:1:2:0:0:0:9",
    "2001:db8:1:2::1%eth0", "2001:db8:1:2::192.0.2.1",
  ]) {
    assert.is(addressBucket(address), bucket, address);
  }
  assert.is(addressBucket("2001:db8:1:3::1"), "2001:db8:1:3::/64");
  assert.is(addressBucket("::1"), "0:0:0:0::/64");
  assert.is(addressBucket("2001:db8::"), "2001:db8:0:0::/64");
});

test("addressBucket: unknown addresses share one bucket; anything else counts as itself", () => {
  assert.is(addressBucket(undefined), "unknown");
  assert.is(addressBucket("  "), "unknown");
  assert.is(addressBucket("1:2:3"), "1:2:3");
  assert.is(addressBucket("1::2::3"), "1::2::3");
  assert.is(addressBucket("client-7"), "client-7");
  assert.is(addressBucket("x".repeat(500)).length, 100);
});

test("connectionAddress: the adapter's address, never a header", () => {
  const request = new Request("http://x/", { headers: { "x-forwarded-for": "198.51.100.1" } });
  assert.is(connectionAddress(request, { clientAddress: "10.0.0.1" }), "10.0.0.1");
  assert.is(connectionAddress(request, {}), undefined);
});

test("forwardedForAddress: the address the outermost trusted proxy saw; client-written entries are ignored", () => {
  const request = (forwardedFor?: string) =>
    new Request("http://x/", { headers: forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor } });
  const oneProxy = forwardedForAddress(1);
  assert.is(oneProxy(request("198.51.100.1"), { clientAddress: "10.0.0.1" }), "198.51.100.1");
  assert.is(oneProxy(request("6.6.6.6, 198.51.100.1"), { clientAddress: "10.0.0.1" }), "198.51.100.1");
  assert.is(oneProxy(request(), { clientAddress: "10.0.0.1" }), "10.0.0.1");
  const twoProxies = forwardedForAddress(2);
  assert.is(twoProxies(request("6.6.6.6, 198.51.100.1, 10.0.0.2"), { clientAddress: "10.0.0.1" }), "198.51.100.1");
  assert.is(twoProxies(request("10.0.0.2"), { clientAddress: "10.0.0.1" }), "10.0.0.2");
  // a host with no socket (a Fetch route handler): the nearest proxy's entry is still the last one
  assert.is(oneProxy(request("6.6.6.6, 198.51.100.1"), {}), "198.51.100.1");
  assert.is(oneProxy(request("198.51.100.1"), {}), "198.51.100.1");
  assert.is(oneProxy(request(), {}), undefined);
  assert.is(twoProxies(request("6.6.6.6, 198.51.100.1, 10.0.0.2"), {}), "198.51.100.1");
  assert.throws(() => forwardedForAddress(0), /at least 1/);
});

test.run();
