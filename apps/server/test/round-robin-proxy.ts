import { createServer, request as httpRequest } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";

export interface RoundRobinProxy {
  /** `http://127.0.0.1:port`: use it like one server's URL (`/api/v1`, `/sync`, …). */
  readonly url: string;
  /** Stops listening and cuts every connection it passed on. */
  close(): Promise<void>;
}

/**
 * Several instances behind one URL, as a load balancer without sticky sessions puts them: each new
 * HTTP request, and each WebSocket upgrade, goes to the next of `targets` (`http://host:port`) in
 * turn. Requests are passed on as they are (Host included); an upgrade is piped byte for byte once
 * its request line and headers are written to the chosen instance. Keep-alive is off towards the
 * instances, so "each request" really is each request.
 */
export async function startRoundRobinProxy(targets: string[]): Promise<RoundRobinProxy> {
  if (targets.length === 0) throw new Error("a round-robin proxy needs at least one target");
  const upstreams = targets.map((target) => new URL(target));
  let turn = 0;
  const next = () => upstreams[turn++ % upstreams.length] as URL;
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  };

  const server = createServer((request, response) => {
    const upstream = next();
    const forwarded = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers: request.headers, agent: false },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(response);
      },
    );
    forwarded.on("error", () => {
      if (!response.headersSent) response.writeHead(502).end();
      else response.destroy();
    });
    request.pipe(forwarded);
  });
  server.on("connection", track);
  server.on("upgrade", (request, client: Socket, head: Buffer) => {
    const upstream = next();
    const socket = connect(Number(upstream.port), upstream.hostname, () => {
      const lines = [`${request.method} ${request.url} HTTP/${request.httpVersion}`];
      for (let i = 0; i < request.rawHeaders.length; i += 2) lines.push(`${request.rawHeaders[i]}: ${request.rawHeaders[i + 1]}`);
      socket.write(`${lines.join("\r\n")}\r\n\r\n`);
      if (head.length > 0) socket.write(head);
      socket.pipe(client).pipe(socket);
    });
    track(socket);
    socket.on("error", () => client.destroy());
    client.on("error", () => socket.destroy());
    socket.on("close", () => client.destroy());
    client.on("close", () => socket.destroy());
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
