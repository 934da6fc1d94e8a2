import { describe, expect, it } from "vitest";
import { redisOptionsFromUrl } from "./redis-url";

describe("redisOptionsFromUrl", () => {
  it("reads what ioredis reads from a redis URL, without url.parse", () => {
    expect(redisOptionsFromUrl("redis://127.0.0.1:6379")).toEqual({ host: "127.0.0.1", port: 6379 });
    expect(redisOptionsFromUrl("redis://user:p%40ss@cache.internal:6380/2?family=6")).toEqual({
      host: "cache.internal",
      port: 6380,
      username: "user",
      password: "p@ss",
      db: 2,
      family: 6,
    });
    expect(redisOptionsFromUrl("rediss://:secret@[::1]")).toEqual({ host: "::1", password: "secret", tls: {} });
  });
});
