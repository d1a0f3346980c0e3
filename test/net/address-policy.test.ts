import { describe, expect, it } from "vitest";
import { blockedRangeOf, createPolicyLookup, formatIPv4, parseIPv4, resolveAllowed, urlProblem } from "../../src/net/address-policy.js";

const strict = { allowPrivateNetworks: false };
const open = { allowPrivateNetworks: true };

describe("IPv4 literals in every notation", () => {
  it.each([
    ["127.0.0.1", "127.0.0.1"],
    ["2130706433", "127.0.0.1"],
    ["0x7f000001", "127.0.0.1"],
    ["0x7f.1", "127.0.0.1"],
    ["0177.0.0.1", "127.0.0.1"],
    ["127.1", "127.0.0.1"],
    ["10.0.258", "10.0.1.2"],
    ["169.254.169.254.", "169.254.169.254"],
  ])("%s is %s", (literal, dotted) => {
    expect(formatIPv4(parseIPv4(literal)!)).toBe(dotted);
  });

  it.each(["example.com", "256.0.0.1", "1.2.3.4.5", "08.1.1.1", "4294967296", "1.2.3.x", ""])("%s is not an IPv4 literal", (host) => {
    expect(parseIPv4(host)).toBeNull();
  });
});

describe("non-public ranges", () => {
  it.each([
    ["0.0.0.0", "this network"],
    ["10.1.2.3", "private"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["100.127.255.255", "carrier-grade NAT"],
    ["127.5.5.5", "loopback"],
    ["169.254.169.254", "link-local"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["198.18.0.1", "benchmarking"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "reserved"],
  ])("%s is refused (%s)", (address, kind) => {
    expect(blockedRangeOf(address)).toBe(kind);
  });

  it.each(["8.8.8.8", "93.184.216.34", "100.128.0.1", "172.32.0.1", "172.15.255.255", "192.169.0.1", "11.0.0.1"])("%s is public", (address) => {
    expect(blockedRangeOf(address)).toBeNull();
  });
});

describe("outbound URLs", () => {
  it.each([
    "http://127.0.0.1/hook",
    "http://2130706433/",
    "http://0x7f.1/",
    "http://0177.0.0.1:8080/",
    "http://10.0.0.5/",
    "http://169.254.169.254/latest/meta-data/",
    "http://192.168.0.10/",
    "http://100.64.1.1/",
    "http://localhost:3000/",
    "http://LOCALHOST./",
    "http://app.localhost/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[2606:4700::1111]/",
  ])("%s is refused by default", (url) => {
    expect(urlProblem(url, strict)).toMatch(/not allowed|IPv6|IPv4/);
  });

  it("IPv6 stays refused when private networks are allowed (IPv4 only); private IPv4 is then fine", () => {
    expect(urlProblem("http://[::1]/", open)).toMatch(/IPv4 only/);
    expect(urlProblem("http://127.0.0.1:9/", open)).toBeNull();
    expect(urlProblem("http://localhost/", open)).toBeNull();
  });

  it("accepts public addresses and names, refuses other schemes and garbage", () => {
    expect(urlProblem("https://hooks.example.com/x?y=1", strict)).toBeNull();
    expect(urlProblem("http://93.184.216.34/", strict)).toBeNull();
    expect(urlProblem("ftp://example.com/", strict)).toMatch(/http or https/);
    expect(urlProblem("not a url", strict)).toMatch(/valid URL/);
  });
});

describe("connection lookup", () => {
  it("resolves names to allowed IPv4 addresses only", async () => {
    await expect(resolveAllowed("localhost", strict)).rejects.toMatchObject({ code: "EADDRNOTALLOWED" });
    await expect(resolveAllowed("localhost", open)).resolves.toContain("127.0.0.1");
  });

  it("serves Node's two lookup calling conventions ({all: true} and single address)", async () => {
    const lookup = createPolicyLookup(open);
    const all = await new Promise((resolve, reject) => lookup("localhost", { all: true }, (e, a) => (e ? reject(e) : resolve(a))));
    expect(all).toEqual([{ address: "127.0.0.1", family: 4 }]);
    const single = await new Promise((resolve, reject) => lookup("localhost", {}, (e, a, f) => (e ? reject(e) : resolve([a, f]))));
    expect(single).toEqual(["127.0.0.1", 4]);
    const refused = await new Promise((resolve) => createPolicyLookup(strict)("localhost", { all: true }, (e) => resolve(e)));
    expect(refused).toMatchObject({ code: "EADDRNOTALLOWED" });
  });
});
