import { readFileSync } from "node:fs";
import { connect, type AddressInfo, type Socket } from "node:net";
import { createServer } from "node:tls";
import { fileURLToPath } from "node:url";
import { startReceiver, type Receiver, type Received, type Reply } from "./receiver.js";

/** The static certificates in test/fixtures/tls (see its README). */
export const TLS_FIXTURES = new URL("../../fixtures/tls/", import.meta.url);
const fixture = (name: string) => readFileSync(new URL(name, TLS_FIXTURES));

/** Which fixture certificate a TLS receiver presents. */
export type TlsIdentity =
  /** Signed by `ca.pem`, for `localhost` and 127.0.0.1. */
  | "localhost"
  /** Signed by `ca.pem`, but for `other.invalid` only. */
  | "other-host"
  /** Self-signed for `localhost` and 127.0.0.1: no CA vouches for it. */
  | "untrusted";

/** Path of the CA that signed the `localhost` and `other-host` certificates (for `NODE_EXTRA_CA_CERTS`). */
export const TEST_CA_FILE = fileURLToPath(new URL("ca.pem", TLS_FIXTURES));

export interface TlsReceiver extends Receiver {
  /** `https://localhost:<port>`. */
  url: string;
  /** The TLS server name (SNI) of each completed handshake, `false` or null when the client sent none. */
  servernames: (string | false | null)[];
  /** Handshakes that failed (the client refused the certificate, or hung up). */
  tlsErrors: Error[];
}

/**
 * A real TLS server on 127.0.0.1 in front of the plain receiver of
 * `receiver.ts`: it terminates TLS with a fixture certificate and pipes the
 * decrypted bytes to the receiver, so requests are recorded and answered
 * exactly as there, while the TLS side records the server names and the
 * handshakes that failed.
 */
export async function startTlsReceiver(identity: TlsIdentity, reply?: (n: number, req: Received) => Reply): Promise<TlsReceiver> {
  const inner = await startReceiver(reply);
  const servernames: (string | false | null)[] = [];
  const tlsErrors: Error[] = [];
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  };
  const server = createServer({ cert: fixture(`${identity}.pem`), key: fixture(`${identity}-key.pem`) }, (secure) => {
    servernames.push(secure.servername);
    const upstream = connect(inner.port, "127.0.0.1");
    track(secure);
    track(upstream);
    secure.on("error", () => upstream.destroy());
    upstream.on("error", () => secure.destroy());
    secure.pipe(upstream).pipe(secure);
  });
  server.on("tlsClientError", (error) => tlsErrors.push(error));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    ...inner,
    url: `https://localhost:${port}`,
    port,
    servernames,
    tlsErrors,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await inner.close();
    },
  };
}
