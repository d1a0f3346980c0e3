import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIPv4, isIPv6 } from "node:net";

/*
 * Where the service may connect on a user's behalf (webhook deliveries, URL
 * ingestion): IPv4 only, and by default only to public addresses, so a URL
 * cannot make the service probe its own network (cloud metadata at
 * 169.254.169.254, admin ports on 127.0.0.1...). URLs are checked when given
 * and again on every connection, because DNS answers can change between the two.
 */

/** Ranges no outbound connection may reach unless private networks are allowed: [first address, prefix length, what it is]. */
const BLOCKED_RANGES: [string, number, string][] = [
  ["0.0.0.0", 8, "this network"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "carrier-grade NAT"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "IETF protocol assignments"],
  ["192.0.2.0", 24, "documentation"],
  ["192.88.99.0", 24, "6to4 relay"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "benchmarking"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"],
];

const BLOCKS = BLOCKED_RANGES.map(([first, bits, kind]) => {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return { base: (parseIPv4(first)! & mask) >>> 0, mask, kind };
});

/**
 * Parses an IPv4 address in any form `inet_aton` accepts (and so any form a
 * URL or a resolver might turn into an address): dotted decimal, one to four
 * parts, each decimal, hex (`0x7f`) or octal (`0177`). `2130706433`,
 * `0x7f.1` and `0177.0.0.1` all give 127.0.0.1. Returns the address as an
 * unsigned 32-bit number, or null when `host` is not an IPv4 literal.
 *
 * @example
 * parseIPv4("2130706433"); // 2130706433 (127.0.0.1)
 * parseIPv4("example.com"); // null
 */
export function parseIPv4(host: string): number | null {
  const parts = host.replace(/\.$/, "").split(".");
  if (parts.length === 0 || parts.length > 4) return null;
  const values: number[] = [];
  for (const part of parts) {
    let value: number;
    if (/^0x[0-9a-f]*$/i.test(part)) value = part.length === 2 ? 0 : parseInt(part.slice(2), 16);
    else if (/^0[0-7]+$/.test(part)) value = parseInt(part.slice(1), 8);
    else if (/^(0|[1-9]\d*)$/.test(part)) value = Number(part);
    else return null;
    if (!Number.isSafeInteger(value)) return null;
    values.push(value);
  }
  // All parts but the last are single bytes; the last fills the remaining bytes.
  const last = values.pop()!;
  if (values.some((v) => v > 255) || last >= 2 ** (8 * (4 - values.length))) return null;
  let address = 0;
  for (const v of values) address = address * 256 + v;
  return address * 2 ** (8 * (4 - values.length)) + last;
}

/**
 * Dotted-decimal form of a 32-bit address.
 *
 * @example
 * formatIPv4(2130706433); // "127.0.0.1"
 */
export function formatIPv4(address: number): string {
  return [address >>> 24, (address >>> 16) & 255, (address >>> 8) & 255, address & 255].join(".");
}

/**
 * Which non-public range an IPv4 address is in (e.g. `"loopback"`), or null when it is public.
 *
 * @example
 * blockedRangeOf("169.254.169.254"); // "link-local"
 * blockedRangeOf("93.184.216.34"); // null
 */
export function blockedRangeOf(address: string | number): string | null {
  const value = typeof address === "number" ? address : parseIPv4(address);
  if (value === null) return "not an IPv4 address";
  for (const block of BLOCKS) if (((value & block.mask) >>> 0) === block.base) return block.kind;
  return null;
}

export interface AddressPolicy {
  /** Connect to private, loopback and other non-public IPv4 addresses too. */
  allowPrivateNetworks: boolean;
}

/**
 * The problem with connecting to this IPv4 address under the policy, or null when it may be used.
 *
 * @example
 * addressProblem("10.0.0.1", { allowPrivateNetworks: false }); // "10.0.0.1 is not a public address (private)"
 */
export function addressProblem(address: string, { allowPrivateNetworks }: AddressPolicy): string | null {
  if (!isIPv4(address)) return `${address} is not an IPv4 address (connections are made over IPv4 only)`;
  if (allowPrivateNetworks) return null;
  const kind = blockedRangeOf(address);
  return kind === null ? null : `${address} is not a public address (${kind})`;
}

/**
 * The problem with an outbound URL that can be seen without DNS (scheme, IPv6
 * or non-public IPv4 literals in any notation, `localhost` names), as a
 * sentence for the person who gave it, or null.
 *
 * @example
 * urlProblem("http://2130706433/hook", { allowPrivateNetworks: false }); // "The url is not allowed: 127.0.0.1 is not a public address (loopback)."
 */
export function urlProblem(raw: string, policy: AddressPolicy): string | null {
  if (!URL.canParse(raw)) return "The url must be a valid URL.";
  const problem = targetProblem(new URL(raw), policy);
  return problem && `The url is not allowed: ${problem}.`;
}

/**
 * What {@link urlProblem} checks, on a parsed URL, as a bare phrase: the
 * check every redirect hop of a fetch goes through again.
 *
 * @example
 * targetProblem(new URL("http://0x7f.1/"), { allowPrivateNetworks: false }); // "127.0.0.1 is not a public address (loopback)"
 */
export function targetProblem(url: URL, policy: AddressPolicy): string | null {
  if (url.protocol !== "http:" && url.protocol !== "https:") return `the scheme must be http or https (not ${url.protocol})`;
  const host = url.hostname;
  if (host.startsWith("[") || isIPv6(host)) return `${host} is an IPv6 address (connections are made over IPv4 only)`;
  // The URL parser already canonicalises IPv4 literals; parsing again covers hosts that reach us un-normalised.
  const literal = parseIPv4(host);
  if (literal !== null) return addressProblem(formatIPv4(literal), policy);
  if (!policy.allowPrivateNetworks && isLocalName(host)) return `${host} is a local name`;
  return null;
}

function isLocalName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  return name === "localhost" || name.endsWith(".localhost") || name === "localhost.localdomain";
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** The `lookup` option `net.connect` takes. */
export type ConnectLookup = (hostname: string, options: { all?: boolean } & Record<string, unknown>, callback: LookupCallback) => void;

/**
 * A `lookup` for `net.connect` (and so for `http.request` and agents) that
 * resolves A records only and hands back only addresses the policy allows;
 * a name with no allowed address fails with `EADDRNOTALLOWED`. Node 20 calls
 * it with `{all: true}` (happy eyeballs), older paths without: both are served.
 * It is never called for IP literals, so check those with {@link urlProblem}.
 *
 * @example
 * http.request(url, { lookup: createPolicyLookup({ allowPrivateNetworks: false }) });
 */
export function createPolicyLookup(policy: AddressPolicy): ConnectLookup {
  return (hostname, options, callback) => {
    resolveAllowed(hostname, policy).then(
      (addresses) => {
        if (options.all) callback(null, addresses.map((address) => ({ address, family: 4 })));
        else callback(null, addresses[0]!, 4);
      },
      (error: NodeJS.ErrnoException) => callback(error, options.all ? [] : ""),
    );
  };
}

/**
 * The IPv4 addresses of `hostname` the policy allows, in resolver order.
 * Rejects with the resolver's error, or `EADDRNOTALLOWED` when every address is refused.
 *
 * @example
 * await resolveAllowed("localhost", { allowPrivateNetworks: true }); // ["127.0.0.1"]
 */
export function resolveAllowed(hostname: string, policy: AddressPolicy): Promise<string[]> {
  return new Promise((resolve, reject) => {
    if (!policy.allowPrivateNetworks && isLocalName(hostname)) {
      reject(notAllowed(`${hostname} is a local name`));
      return;
    }
    dnsLookup(hostname, { family: 4, all: true }, (error, found) => {
      if (error) return reject(error);
      const allowed = found.map((a) => a.address).filter((address) => addressProblem(address, policy) === null);
      if (allowed.length > 0) resolve(allowed);
      // The addresses stay unnamed: whoever gave the URL must not learn the internal network's layout from the answer.
      else reject(notAllowed(found.length > 0 ? `${hostname} does not resolve to a public address` : `${hostname} has no IPv4 address`));
    });
  });
}

function notAllowed(message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code: "EADDRNOTALLOWED" });
}
