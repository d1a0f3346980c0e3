import { isIP } from "node:net";
import { networkInterfaces } from "node:os";

const WILDCARDS = new Set(["0.0.0.0", "::"]);

/**
 * The origins of pages a server serves over plain HTTP from `address` (what
 * `server.address()` reports after listening) and `port`: that address; for a
 * wildcard address every interface's address; `localhost` when loopback is
 * among them (browsers always resolve that name to this machine); and `name`,
 * the host it was asked to bind, when that is a DNS name. Other names that
 * reach the server (a LAN name, a proxy's) are unknown to it: configure
 * `publicUrl` for those. Never derived from a request's `Host`, which the client writes.
 *
 * @example
 * listenOrigins({ address: "127.0.0.1", port: 3000 }) // ["http://127.0.0.1:3000", "http://localhost:3000"]
 */
export function listenOrigins({ address, port, name }: { address: string; port: number; name?: string }): string[] {
  const hosts = WILDCARDS.has(address) ? [address, ...interfaceAddresses(address === "::")] : [address];
  if (hosts.some(isLoopback)) hosts.push("localhost");
  if (name !== undefined && isIP(name) === 0) hosts.push(name.toLowerCase());
  return [...new Set(hosts.map((host) => new URL(`http://${isIP(host) === 6 ? `[${host}]` : host}:${port}`).origin))];
}

/** The origin of a configured `publicUrl` (which may carry a path prefix). */
export function publicOrigin(publicUrl: string): string {
  return new URL(publicUrl).origin;
}

function interfaceAddresses(withIpv6: boolean): string[] {
  return Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .filter((i) => withIpv6 || i.family === "IPv4")
    .map((i) => i.address);
}

const isLoopback = (address: string) => address === "::1" || address.startsWith("127.");
