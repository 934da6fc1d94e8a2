import { randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { RAW_MEMORY_MAX_CIPHERTEXT_BYTES, RAW_MEMORY_RECOVERY, RAW_MEMORY_TAG_BYTES, rawMemorySignerStatement } from "@tandem/core";
import { RawMemoryDeviceClient, signedWrap } from "@tandem/core/raw-memory-client";
import {
  decryptRecord,
  fromBase64,
  newAccountKey,
  newKeyPair,
  sessionIdHash,
  signerOf,
  toBase64,
  unwrapAccountKey,
} from "@tandem/core/raw-memory-crypto";
import pg from "pg";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RAW_MEMORY_RECORDS_BURST } from "../src/agent/raw-memory/raw-memory-routes";
import { createApiKey } from "../src/auth/api-keys";
import { SIGN_IN_SCOPES } from "../src/delegation/runtime/pairing-service";
import { call, storages } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";

/** Cheap scrypt for tests (the product uses 2^16). */
const TEST_SCRYPT = { N: 2 ** 14, r: 8, p: 1 };
const MiB = 1024 * 1024;
const CANARY = "CANARY-7f3d9a1c-raw-memory-plaintext";

function device(user: TestUser, name = "laptop"): RawMemoryDeviceClient {
  return new RawMemoryDeviceClient(user.client, { deviceId: randomUUID(), name, ...newKeyPair() });
}

function session(text: string): Uint8Array {
  return new TextEncoder().encode(`${JSON.stringify({ type: "user", message: { content: text } })}\n`);
}

function sealed(dev: RawMemoryDeviceClient, text = "hello") {
  return dev.seal({
    recordId: randomUUID(),
    runtime: "claude-code",
    sessionIdHash: sessionIdHash("claude-code", randomUUID()),
    createdAt: new Date().toISOString(),
    plaintext: session(text),
  });
}

async function files(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
}

describe.each(storages("raw memory suite"))("raw memory (%s)", (storage) => {
  let ts: TestServer;
  const logs: string[] = [];
  let serial = 0;
  const user = (name: string) => ts.addUser(`${name}${++serial}`);

  beforeAll(async () => {
    const logger = pino({ level: "debug" }, { write: (line: string) => logs.push(line) });
    ts = await startTestServer({ userQuotaBytes: 12 * MiB, accessLog: "info", logLevel: "debug" }, storage, logger);
  });
  afterAll(async () => {
    await ts?.stop();
  });

  /** A user with one device set up (first key, recovery code). */
  async function setUp(name: string) {
    const u = await user(name);
    const dev = device(u);
    await dev.enrol();
    const code = await dev.setUp({ scrypt: TEST_SCRYPT });
    return { u, dev, code };
  }

  it("enrols, stores, lists and reads records; the server holds no plaintext (database, logs, answers)", async () => {
    const { u, dev } = await setUp("canary");
    const again = await call(ts, u.apiKey, "POST", "/raw-memory/devices", {
      deviceId: dev.device.deviceId,
      publicKey: toBase64(dev.device.publicKey),
      name: "laptop",
    });
    expect(again.status).toBe(200);

    const record = dev.seal({
      recordId: randomUUID(),
      runtime: "codex",
      sessionIdHash: sessionIdHash("codex", "rollout-1"),
      createdAt: "2026-12-01T10:00:00.000Z",
      plaintext: session(`the canary is ${CANARY}`),
    });
    const first = await call<{ record: { cursor: string; ciphertextBytes: number } }>(ts, u.apiKey, "POST", "/raw-memory/records", record);
    expect(first.status).toBe(201);
    expect(first.body.record.ciphertextBytes).toBe(record.plaintextBytes + RAW_MEMORY_TAG_BYTES);
    // The same record again (a retry after a lost answer): 200, stored once.
    expect((await call(ts, u.apiKey, "POST", "/raw-memory/records", record)).status).toBe(200);
    // The same id with other content: 409, and the first stays.
    const other = { ...sealed(dev), recordId: record.recordId };
    expect(await call(ts, u.apiKey, "POST", "/raw-memory/records", other)).toMatchObject({
      status: 409,
      body: { error: "record_conflict" },
    });

    const second = sealed(dev, "second");
    await dev.upload(second);
    const page = await u.client.call("listRawMemoryRecords", { query: { limit: 1 } });
    expect(page.records.map((r) => r.recordId)).toEqual([record.recordId]);
    expect(page.nextAfter).not.toBeNull();
    const rest = await u.client.call("listRawMemoryRecords", { query: { after: page.nextAfter ?? undefined } });
    expect(rest.records.map((r) => r.recordId)).toEqual([second.recordId]);
    expect(rest.nextAfter).toBeNull();
    expect(JSON.stringify(rest)).not.toContain('ciphertext"');
    const byDevice = await u.client.call("listRawMemoryRecords", { query: { deviceId: randomUUID() } });
    expect(byDevice.records).toEqual([]);

    const devices = await u.client.call("listRawMemoryDevices");
    expect(devices.devices).toEqual([
      expect.objectContaining({ deviceId: dev.device.deviceId, hasCurrentKey: true, records: 2, name: "laptop" }),
    ]);

    // Only the device decrypts it.
    expect(new TextDecoder().decode(await dev.read(record.recordId))).toContain(CANARY);

    // Every answer the server gave about it, its database and its logs: no canary anywhere.
    const answers = [
      await call(ts, u.apiKey, "GET", `/raw-memory/records/${record.recordId}`),
      await call(ts, u.apiKey, "GET", "/raw-memory/records"),
      await call(ts, u.apiKey, "GET", "/raw-memory/keys"),
      await call(ts, u.apiKey, "GET", "/raw-memory/devices"),
    ];
    for (const answer of answers) expect(JSON.stringify(answer.body)).not.toContain(CANARY);
    const canaryHex = Buffer.from(CANARY).toString("hex");
    if (storage === "sqlite") {
      await ts.server.context.database.db.selectFrom("raw_memory_records").select("id").execute();
      for (const file of await files(ts.dataDir)) {
        const bytes = await readFile(file);
        expect(bytes.includes(Buffer.from(CANARY)), file).toBe(false);
        expect(bytes.includes(Buffer.from(CANARY, "utf16le")), file).toBe(false);
      }
    } else {
      const client = new pg.Client({ connectionString: ts.databaseUrl });
      await client.connect();
      try {
        for (const table of ["raw_memory_records", "raw_memory_keys", "raw_memory_devices", "raw_memory_accounts"]) {
          const { rows } = await client.query(`select * from ${table}`);
          const dump = JSON.stringify(rows, (_key, value) => (Buffer.isBuffer(value) ? value.toString("hex") : value));
          expect(dump).not.toContain(CANARY);
          expect(dump).not.toContain(canaryHex);
        }
      } finally {
        await client.end();
      }
    }
    expect(logs.length).toBeGreaterThan(0);
    expect(logs.join("\n")).not.toContain(CANARY);
  });

  it("a device id of another account is 409; another account's records and keys are out of reach", async () => {
    const alice = await setUp("alice");
    const mallory = await user("mallory");
    const record = sealed(alice.dev);
    await alice.dev.upload(record);

    const taken = await call(ts, mallory.apiKey, "POST", "/raw-memory/devices", {
      deviceId: alice.dev.device.deviceId,
      publicKey: toBase64(newKeyPair().publicKey),
    });
    expect(taken).toMatchObject({ status: 409, body: { message: "Raw Memory collector belongs to another account" } });
    // Records and key wraps naming alice's device from mallory's account.
    expect((await call(ts, mallory.apiKey, "POST", "/raw-memory/records", { ...sealed(alice.dev), recordId: randomUUID() })).status).toBe(
      409,
    );
    expect(
      await call(ts, mallory.apiKey, "PUT", "/raw-memory/keys", {
        wraps: [{ keyVersion: 1, recipient: alice.dev.device.deviceId, wrapped: toBase64(new Uint8Array(104)) }],
      }),
    ).toMatchObject({ status: 409 });
    expect((await call(ts, mallory.apiKey, "DELETE", `/raw-memory/devices/${alice.dev.device.deviceId}`, {})).status).toBe(409);
    expect((await call(ts, mallory.apiKey, "GET", `/raw-memory/records/${record.recordId}`)).status).toBe(404);
    const theirs = await mallory.client.call("listRawMemoryRecords");
    expect(theirs.records).toEqual([]);
    const keys = await mallory.client.call("getRawMemoryKeys");
    expect(keys).toMatchObject({ currentVersion: 0, recovery: null, wraps: [] });
    // Another key for an enrolled device id: 409 as well.
    expect(
      await call(ts, alice.u.apiKey, "POST", "/raw-memory/devices", {
        deviceId: alice.dev.device.deviceId,
        publicKey: toBase64(newKeyPair().publicKey),
      }),
    ).toMatchObject({ status: 409, body: { error: "device_key_conflict" } });
  });

  it("refuses records and keys that are not what they claim, with a clear 4xx each", async () => {
    const { u, dev } = await setUp("bad");
    const good = sealed(dev);
    const post = (body: unknown) => call<{ error: string }>(ts, u.apiKey, "POST", "/raw-memory/records", body);
    const cases: [string, unknown, number, string?][] = [
      ["short nonce", { ...good, nonce: toBase64(new Uint8Array(12)) }, 400, "invalid_size"],
      [
        "ciphertext shorter than claimed",
        { ...good, ciphertext: toBase64(fromBase64(good.ciphertext).subarray(0, 10)) },
        400,
        "ciphertext_size",
      ],
      ["truncated base64", { ...good, ciphertext: good.ciphertext.slice(0, -3) }, 400, "invalid_base64"],
      ["plaintextBytes a lie", { ...good, plaintextBytes: good.plaintextBytes + 5 }, 400, "ciphertext_size"],
      ["not base64", { ...good, ciphertext: "%%%" }, 400],
      ["unknown alg", { ...good, alg: "aes-ecb" }, 400],
      ["unknown runtime", { ...good, runtime: "cursor" }, 400],
      ["session hash not hex", { ...good, sessionIdHash: "abc" }, 400],
      ["record id not a uuid", { ...good, recordId: "1" }, 400],
      ["negative size", { ...good, plaintextBytes: -1 }, 400],
      ["a device nobody enrolled", { ...good, deviceId: randomUUID() }, 404],
      ["a key version that does not exist", { ...good, keyVersion: 7 }, 400, "key_version"],
    ];
    for (const [what, body, status, error] of cases) {
      const answer = await post(body);
      expect(answer.status, what).toBe(status);
      if (error) expect(answer.body.error, what).toBe(error);
    }
    // An enrolled device without the key cannot have encrypted this (another device's ciphertext).
    const stranger = device(u, "new");
    await stranger.enrol();
    expect(await post({ ...good, deviceId: stranger.device.deviceId })).toMatchObject({
      status: 409,
      body: { error: "device_has_no_key" },
    });
    // Moved to another record id, the ciphertext no longer opens (its metadata is bound to it).
    const key = unwrapAccountKey(
      fromBase64((await u.client.call("getRawMemoryKeys", { query: { recipient: dev.device.deviceId } })).wraps[0]?.wrapped ?? ""),
      dev.device.privateKey,
      dev.device.deviceId,
      1,
    );
    expect(() => decryptRecord(key, { ...good, recordId: randomUUID() }, fromBase64(good.nonce), fromBase64(good.ciphertext))).toThrow();

    const put = (body: unknown) => call<{ error: string }>(ts, u.apiKey, "PUT", "/raw-memory/keys", body);
    const wrap = (bytes: number) => ({
      keyVersion: 1,
      recipient: stranger.device.deviceId,
      wrapped: toBase64(new Uint8Array(bytes).fill(1)),
    });
    expect(await put({ wraps: [wrap(50)] })).toMatchObject({ status: 400, body: { error: "invalid_size" } });
    expect(await put({ wraps: [{ ...wrap(104), keyVersion: 5 }] })).toMatchObject({ status: 400, body: { error: "key_version" } });
    expect(await put({ wraps: [{ ...wrap(104), recipient: randomUUID() }] })).toMatchObject({ status: 404 });
    expect(await put({ wraps: [wrap(104), wrap(104)] })).toMatchObject({ status: 400, body: { error: "duplicate_wrap" } });
    // A stored wrap is never replaced, even by a properly signed one.
    const { recovery } = await u.client.call("getRawMemoryKeys", { query: {} });
    const recoveryWrap = signedWrap(key, 1, RAW_MEMORY_RECOVERY, fromBase64(recovery?.publicKey ?? ""));
    expect(await put({ wraps: [recoveryWrap] })).toMatchObject({ status: 409, body: { error: "wrap_exists" } });
    const enrol = (publicKey: string) =>
      call<{ error: string }>(ts, u.apiKey, "POST", "/raw-memory/devices", { deviceId: randomUUID(), publicKey });
    expect((await enrol(toBase64(new Uint8Array(31)))).status).toBe(400);
    expect((await enrol(toBase64(new Uint8Array(32)))).status).toBe(400);
    expect(
      (await call(ts, u.apiKey, "POST", "/raw-memory/devices", { deviceId: "laptop", publicKey: toBase64(newKeyPair().publicKey) })).status,
    ).toBe(400);
  });

  it("a second computer enrols with the recovery code and reads the old records; a wrong code is refused", async () => {
    const { u, dev, code } = await setUp("two");
    const old = sealed(dev, "written on the first computer");
    await dev.upload(old);

    const second = device(u, "desktop");
    await second.enrol();
    expect(await second.load()).toBe(false);
    await expect(second.recover("0000-0000-0000-0000-0000-0000-00")).rejects.toThrow("not this account's");
    await second.recover(code.toLowerCase().replace(/-/g, " "));
    expect(new TextDecoder().decode(await second.read(old.recordId))).toContain("written on the first computer");
    const fresh = sealed(second, "from the second");
    await second.upload(fresh);
    expect(new TextDecoder().decode(await dev.read(fresh.recordId))).toContain("from the second");

    // A third, given the key by an enrolled device instead of the code.
    const third = device(u, "tablet");
    await third.enrol();
    await dev.grant(third.device.deviceId);
    expect(await third.load()).toBe(true);
    expect(new TextDecoder().decode(await third.read(old.recordId))).toContain("written on the first computer");
  });

  it("a signed-in desktop's key works; a key holder without the recovery code cannot get a device into the next rotation", async () => {
    const { u, dev, code } = await setUp("attack");
    await dev.upload(sealed(dev, "before"));
    // The key a pairing-code sign-in gets: raw memory's own scopes, no os.memory.
    const signIn = await createApiKey(ts.server.context.db, { userId: u.userId, scopes: SIGN_IN_SCOPES, label: "app sign-in" });
    const asSignIn = { ...u, apiKey: signIn.apiKey, client: u.client.withToken(signIn.apiKey) };
    expect((await call(ts, signIn.apiKey, "POST", "/os/memory/search", { query: "x" })).status).toBe(403);
    // A second computer signed in with it: enrols, recovers with the code, reads the first one's records.
    const second = device(asSignIn, "second");
    await second.enrol();
    await second.recover(code);
    const [first] = (await asSignIn.client.call("listRawMemoryRecords", { query: {} })).records;
    expect(new TextDecoder().decode(await second.read(first?.recordId ?? ""))).toContain("before");

    // The attacker: the same key, no recovery code, no enrolled computer. Its own device enrols…
    const thief = device(asSignIn, "thief");
    await thief.enrol();
    const thiefKey = fromBase64(
      (await asSignIn.client.call("listRawMemoryDevices")).devices.find((d) => d.name === "thief")?.publicKey ?? "",
    );
    const put = (body: unknown) => call<{ error: string }>(ts, signIn.apiKey, "PUT", "/raw-memory/keys", body);
    const forged = newAccountKey();
    // …but a wrap for it is refused unsigned, or signed by a key of its own.
    const own = signedWrap(forged, 1, thief.device.deviceId, thiefKey);
    expect(await put({ wraps: [{ ...own, proof: undefined }] })).toMatchObject({ status: 403, body: { error: "invalid_proof" } });
    expect(await put({ wraps: [own] })).toMatchObject({ status: 403, body: { error: "invalid_proof" } });
    // A rotation to a key of its choosing, wrapped for everyone (public keys are public), is refused too:
    // through PUT and through forgetting a device. Nothing changed.
    const { recovery, currentVersion } = await asSignIn.client.call("getRawMemoryKeys", { query: {} });
    const devices = (await asSignIn.client.call("listRawMemoryDevices")).devices;
    const recipients = [
      ...devices.filter((d) => d.hasCurrentKey).map((d) => [d.deviceId, fromBase64(d.publicKey)] as const),
      [RAW_MEMORY_RECOVERY, fromBase64(recovery?.publicKey ?? "")] as const,
    ];
    const signer = signerOf(forged);
    const selfEndorsed = {
      publicKey: toBase64(signer.publicKey),
      endorsement: toBase64(signer.sign(rawMemorySignerStatement(currentVersion + 1, toBase64(signer.publicKey)))),
    };
    const rotated = recipients.map(([id, publicKey]) => signedWrap(forged, currentVersion + 1, id, publicKey));
    expect(await put({ signer: selfEndorsed, wraps: rotated })).toMatchObject({ status: 403, body: { error: "invalid_proof" } });
    const viaForget = await call<{ error: string }>(ts, signIn.apiKey, "DELETE", `/raw-memory/devices/${second.device.deviceId}`, {
      rotation: {
        keyVersion: currentVersion + 1,
        signer: selfEndorsed,
        wraps: rotated.filter((w) => w.recipient !== second.device.deviceId).map(({ keyVersion: _, ...w }) => w),
      },
    });
    expect(viaForget).toMatchObject({ status: 403, body: { error: "invalid_proof" } });
    expect((await asSignIn.client.call("getRawMemoryKeys", { query: {} })).currentVersion).toBe(currentVersion);

    // The owner's next rotation (forgetting the second computer) goes to the enrolled holders only, never the thief.
    await dev.forget(second.device.deviceId);
    const keys = await u.client.call("getRawMemoryKeys", { query: {} });
    expect(
      keys.wraps
        .filter((w) => w.keyVersion === keys.currentVersion)
        .map((w) => w.recipient)
        .sort(),
    ).toEqual([dev.device.deviceId, RAW_MEMORY_RECOVERY].sort());
    expect(keys.wraps.filter((w) => w.recipient === thief.device.deviceId)).toEqual([]);
    expect(await thief.load()).toBe(false);
  });

  it("forgetting a device deletes its records and wraps and rotates the key so it cannot read new records", async () => {
    const { u, dev, code } = await setUp("forget");
    const lost = device(u, "lost laptop");
    await lost.enrol();
    await lost.recover(code);
    const lostRecord = sealed(lost, "from the lost laptop");
    await lost.upload(lostRecord);
    const kept = sealed(dev, "kept");
    await dev.upload(kept);
    const waiting = device(u, "waiting");
    await waiting.enrol();

    const forget = (body: unknown) => call<{ error: string }>(ts, u.apiKey, "DELETE", `/raw-memory/devices/${lost.device.deviceId}`, body);
    expect(await forget({})).toMatchObject({ status: 400, body: { error: "rotation_required" } });
    const wrapped = toBase64(new Uint8Array(104).fill(3));
    expect(await forget({ rotation: { keyVersion: 2, wraps: [{ recipient: RAW_MEMORY_RECOVERY, wrapped }] } })).toMatchObject({
      status: 400,
      body: { error: "rotation_recipients" },
    });
    expect(
      await forget({
        rotation: {
          keyVersion: 2,
          wraps: [
            { recipient: RAW_MEMORY_RECOVERY, wrapped },
            { recipient: dev.device.deviceId, wrapped },
            { recipient: lost.device.deviceId, wrapped },
          ],
        },
      }),
    ).toMatchObject({ status: 400, body: { error: "rotation_recipients" } });
    expect(await forget({ rotation: { keyVersion: 3, wraps: [] } })).toMatchObject({
      status: 409,
      body: { error: "key_version_conflict" },
    });

    const staleRecord = sealed(dev, "sealed with version 1");
    expect(await dev.forget(lost.device.deviceId)).toEqual({ deletedRecords: 1 });
    expect(dev.currentVersion).toBe(2);
    expect((await call(ts, u.apiKey, "GET", `/raw-memory/records/${lostRecord.recordId}`)).status).toBe(404);
    const keys = await u.client.call("getRawMemoryKeys");
    expect(keys.currentVersion).toBe(2);
    expect(keys.wraps.filter((w) => w.recipient === lost.device.deviceId)).toEqual([]);
    expect(
      keys.wraps
        .filter((w) => w.keyVersion === 2)
        .map((w) => w.recipient)
        .sort(),
    ).toEqual([dev.device.deviceId, RAW_MEMORY_RECOVERY].sort());
    const { devices } = await u.client.call("listRawMemoryDevices");
    expect(devices.map((d) => d.deviceId).sort()).toEqual([dev.device.deviceId, waiting.device.deviceId].sort());

    // New records use version 2, which the forgotten device (keeping version 1 in memory) cannot open.
    const after = sealed(dev, "after the rotation");
    expect(after.keyVersion).toBe(2);
    await dev.upload(after);
    const { record } = await u.client.call("getRawMemoryRecord", { params: { recordId: after.recordId } });
    await expect(lost.read(after.recordId)).rejects.toThrow();
    expect(() =>
      decryptRecord(
        unwrapAccountKey(
          fromBase64(keys.wraps.find((w) => w.keyVersion === 1 && w.recipient === RAW_MEMORY_RECOVERY)?.wrapped ?? ""),
          newKeyPair().privateKey,
          RAW_MEMORY_RECOVERY,
          1,
        ),
        { ...record },
        fromBase64(record.nonce),
        fromBase64(record.ciphertext),
      ),
    ).toThrow();
    // Old versions no longer take new records; the old record stays readable; the recovery code opens version 2.
    const stale = await call(ts, u.apiKey, "POST", "/raw-memory/records", staleRecord);
    expect(stale).toMatchObject({ status: 409, body: { error: "stale_key_version" } });
    expect(new TextDecoder().decode(await dev.read(kept.recordId))).toContain("kept");
    const rescued = device(u, "rescued");
    await rescued.enrol();
    await rescued.recover(code);
    expect(new TextDecoder().decode(await rescued.read(after.recordId))).toContain("after the rotation");
  });

  it("two rotations racing: one wins, the other is told the key changed", async () => {
    const { u, dev, code } = await setUp("race");
    const a = device(u, "a");
    const b = device(u, "b");
    for (const d of [a, b]) {
      await d.enrol();
      await d.recover(code);
    }
    const results = await Promise.allSettled([dev.forget(a.device.deviceId), dev.forget(b.device.deviceId)]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const refused = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(String(refused.reason)).toMatch(/409|400/);
    expect((await u.client.call("getRawMemoryKeys")).currentVersion).toBe(2);
  });

  it("counts ciphertext in the storage quota (413), takes 10 MB records, refuses bigger ones and floods (429)", async () => {
    const { u, dev } = await setUp("quota");
    const big = dev.seal({
      recordId: randomUUID(),
      runtime: "claude-code",
      sessionIdHash: sessionIdHash("claude-code", "big"),
      createdAt: new Date().toISOString(),
      plaintext: new Uint8Array(RAW_MEMORY_MAX_CIPHERTEXT_BYTES - RAW_MEMORY_TAG_BYTES).fill(97),
    });
    expect((await call(ts, u.apiKey, "POST", "/raw-memory/records", big)).status).toBe(201);
    const tooBig = { ...big, recordId: randomUUID(), ciphertext: toBase64(new Uint8Array(RAW_MEMORY_MAX_CIPHERTEXT_BYTES + 3)) };
    expect((await call(ts, u.apiKey, "POST", "/raw-memory/records", tooBig)).status).toBe(400);
    const more = dev.seal({
      recordId: randomUUID(),
      runtime: "claude-code",
      sessionIdHash: sessionIdHash("claude-code", "more"),
      createdAt: new Date().toISOString(),
      plaintext: new Uint8Array(3 * MiB),
    });
    expect(await call(ts, u.apiKey, "POST", "/raw-memory/records", more)).toMatchObject({
      status: 413,
      body: { error: "storage_quota_exceeded" },
    });
    // The stored record again is still answered (a retry), quota or not.
    expect((await call(ts, u.apiKey, "POST", "/raw-memory/records", big)).status).toBe(200);

    const flood = await setUp("flood");
    const statuses: number[] = [];
    for (let i = 0; i < RAW_MEMORY_RECORDS_BURST + 5; i++) {
      const answer = await call(ts, flood.u.apiKey, "POST", "/raw-memory/records", sealed(flood.dev));
      statuses.push(answer.status);
      if (answer.status === 429) {
        expect(answer.headers.get("retry-after")).toMatch(/^\d+$/);
        break;
      }
    }
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.slice(0, -1).every((status) => status === 201)).toBe(true);
    const { records } = await flood.u.client.call("listRawMemoryRecords", { query: { limit: 500 } });
    expect(records).toHaveLength(statuses.length - 1);
  });
});
