import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";

/** A free TCP port on 127.0.0.1 (asked of the OS, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface TcpForwarder {
  /** The port to connect to instead of the target's. */
  readonly port: number;
  /** Cuts every connection passed on and refuses new ones (the port stops listening), as a network outage does. */
  cut(): Promise<void>;
  /** Listens again on the same port and passes connections on. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A small TCP forwarder between the servers and a database (or anything TCP), which a test cuts and
 * restores: what a database restarting or a network partition looks like to its clients.
 */
export async function startTcpForwarder(targetPort: number, targetHost = "127.0.0.1"): Promise<TcpForwarder> {
  const sockets = new Set<Socket>();
  const listen = async (port: number): Promise<Server> => {
    const server = createServer((client) => {
      const upstream = connect(targetPort, targetHost);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.once("close", () => sockets.delete(socket));
      }
      client.pipe(upstream).pipe(client);
      client.on("error", () => upstream.destroy());
      upstream.on("error", () => client.destroy());
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    server.listen(port, "127.0.0.1");
    await once(server, "listening");
    return server;
  };
  let server: Server | undefined = await listen(0);
  const port = (server.address() as AddressInfo).port;
  const cut = async () => {
    const closing = server;
    server = undefined;
    if (!closing) return;
    const closed = new Promise<void>((resolve) => closing.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    await closed;
  };
  return {
    port,
    cut,
    restore: async () => {
      if (!server) server = await listen(port);
    },
    close: cut,
  };
}

export interface PrivateRedis {
  readonly url: string;
  /** SIGKILL: Redis dies at once, with nothing on disk, as a crashed Redis restarting empty. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty). */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A `redis-server` of this test's own on a free port, with nothing on disk, which the test may kill
 * and start again (the machine's shared Redis must never be stopped).
 */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    const started = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    child = started;
    await new Promise<void>((resolve, reject) => {
      let output = "";
      started.once("exit", (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)));
      started.stdout?.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes("Ready to accept connections")) resolve();
      });
    });
    started.stdout?.resume();
  };
  const kill = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = once(running, "exit");
    running.kill("SIGKILL");
    await exited;
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, kill, start, stop: kill };
}
