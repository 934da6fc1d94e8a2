import { createServer, request as httpRequest } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";

export interface RoundRobinProxy {
  /** `http://127.0.0.1:port`: use it like one server's URL (`/api/v1`, `/sync`, …). */
  readonly url: string;
  /** Stops listening and cuts every connection it passed on. */
  close(): Promise<void>;
}

/** How long a target that refused a connection is skipped before it is tried again (nginx's `fail_timeout`). */
const DOWN_FOR_MS = 2000;

/**
 * Several instances behind one URL, as a load balancer without sticky sessions puts them: each new
 * HTTP request, and each WebSocket upgrade, goes to the next of `targets` (`http://host:port`) in
 * turn. Requests are passed on as they are (Host included); an upgrade is piped byte for byte once
 * its request line and headers are written to the chosen instance. Keep-alive is off towards the
 * instances, so "each request" really is each request.
 *
 * Like a load balancer's passive health check, a target that refuses a connection (an instance
 * that died) is skipped for a while and the request or upgrade goes to the next one; only when
 * every target refuses does the client get a 502 (or its upgrade is cut).
 */
export async function startRoundRobinProxy(targets: string[], options: { port?: number } = {}): Promise<RoundRobinProxy> {
  if (targets.length === 0) throw new Error("a round-robin proxy needs at least one target");
  const upstreams = targets.map((target) => ({ url: new URL(target), downUntil: 0 }));
  let turn = 0;
  /** The targets to try for one request, in order: the next live ones in turn, then those marked down. */
  const order = () => {
    const start = turn++;
    const rotated = upstreams.map((_, i) => upstreams[(start + i) % upstreams.length] as (typeof upstreams)[number]);
    const now = Date.now();
    return [...rotated.filter((u) => u.downUntil <= now), ...rotated.filter((u) => u.downUntil > now)];
  };
  const refused = (error: NodeJS.ErrnoException) => error.code === "ECONNREFUSED" || error.code === "ECONNRESET";
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  };

  const server = createServer(async (request, response) => {
    // Read whole, so it can be sent again to another target (test bodies are small).
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const attempt = (candidates: (typeof upstreams)[number][]) => {
      const [upstream, ...rest] = candidates;
      if (!upstream) {
        response.writeHead(502).end();
        return;
      }
      let answered = false;
      const forwarded = httpRequest(
        {
          host: upstream.url.hostname,
          port: upstream.url.port,
          method: request.method,
          path: request.url,
          headers: request.headers,
          agent: false,
        },
        (answer) => {
          answered = true;
          response.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
          answer.pipe(response);
          answer.on("error", () => response.destroy());
        },
      );
      forwarded.on("socket", (socket) => track(socket));
      forwarded.on("error", (error: NodeJS.ErrnoException) => {
        if (!answered && refused(error) && forwarded.socket?.bytesRead === 0) {
          upstream.downUntil = Date.now() + DOWN_FOR_MS;
          attempt(rest);
        } else if (!response.headersSent) response.writeHead(502).end();
        else response.destroy();
      });
      response.on("close", () => forwarded.destroy());
      forwarded.end(body);
    };
    attempt(order());
  });
  server.on("connection", track);
  server.on("upgrade", (request, client: Socket, head: Buffer) => {
    const attempt = (candidates: (typeof upstreams)[number][]) => {
      const [upstream, ...rest] = candidates;
      if (!upstream || client.destroyed) {
        client.destroy();
        return;
      }
      let connected = false;
      const socket = connect(Number(upstream.url.port), upstream.url.hostname, () => {
        connected = true;
        const lines = [`${request.method} ${request.url} HTTP/${request.httpVersion}`];
        for (let i = 0; i < request.rawHeaders.length; i += 2) lines.push(`${request.rawHeaders[i]}: ${request.rawHeaders[i + 1]}`);
        socket.write(`${lines.join("\r\n")}\r\n\r\n`);
        if (head.length > 0) socket.write(head);
        socket.pipe(client).pipe(socket);
        socket.on("close", () => client.destroy());
        client.on("close", () => socket.destroy());
      });
      track(socket);
      socket.on("error", (error: NodeJS.ErrnoException) => {
        if (!connected && refused(error)) {
          upstream.downUntil = Date.now() + DOWN_FOR_MS;
          attempt(rest);
        } else client.destroy();
      });
    };
    client.on("error", () => client.destroy());
    attempt(order());
  });

  // A fixed port lets a test stop the proxy and start it again at the same URL (clients "offline", then back).
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
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
