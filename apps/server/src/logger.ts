import pino, { type Logger } from "pino";

export type { Logger };

/** JSON lines on stderr, so stdout stays free for the CLI's own output. */
export function createLogger(level: string): Logger {
  return pino({ level, base: { service: "tandem-server" } }, pino.destination(2));
}
