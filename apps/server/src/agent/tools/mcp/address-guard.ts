// The server fetches URLs its users typed (remote tool servers, and the authorization servers they
// name). Without a guard that is a way into the operator's network: the loopback interface, the
// private LAN, a cloud's metadata service. Every address a request would connect to is checked
// after DNS resolution, and the connection is pinned to the checked address (see guarded-fetch.ts),
// so a name that resolves differently a moment later (DNS rebinding) gains nothing.

import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP } from "node:net";
import { badRequest } from "../../../http/errors";

/** Thrown when a URL's host is, or resolves to, an address tool servers may not use. */
export class AddressRefused extends Error {
  override readonly name = "AddressRefused";
  constructor(
    message: string,
    /** `private`: a refused address (an operator may allow those); `unresolvable`: no address at all. */
    readonly reason: "private" | "unresolvable" = "private",
  ) {
    super(message);
  }
}

const refused = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8], // "this" network; 0.0.0.0 reaches the local host on many systems
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, with the metadata service at 169.254.169.254
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved and broadcast
] as const) {
  refused.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 96], // unspecified, loopback and the old IPv4-compatible forms
  ["64:ff9b::", 96], // NAT64: an IPv4 address in disguise
  ["64:ff9b:1::", 48],
  ["100::", 64],
  ["2001::", 32], // Teredo
  ["2001:db8::", 32],
  ["2002::", 16], // 6to4: an IPv4 address in disguise
  ["fc00::", 7], // unique local, with AWS's metadata service at fd00:ec2::254
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
] as const) {
  refused.addSubnet(network, prefix, "ipv6");
}

/** `::ffff:a.b.c.d` or `::ffff:xxxx:xxxx` (how URLs write it) as the IPv4 address it carries. */
function mappedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^::ffff:((?:\d{1,3}\.){3}\d{1,3})$/.exec(lower);
  if (dotted?.[1]) return dotted[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex?.[1] || !hex[2]) return undefined;
  const high = Number.parseInt(hex[1], 16);
  const low = Number.parseInt(hex[2], 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join(".");
}

/** Whether tool servers may connect to this IP address: no loopback, private, link-local, metadata or reserved one. */
export function isPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const family = isIP(bare);
  if (family === 4) return !refused.check(bare, "ipv4");
  if (family === 6) {
    const v4 = mappedIpv4(bare);
    if (v4 !== undefined) return isIP(v4) === 4 && !refused.check(v4, "ipv4");
    // Any other IPv6 form that carries an IPv4 address (`::a.b.c.d`, `::ffff:0:a.b.c.d`): refused.
    // (BlockList checks IPv4 rules against IPv4-mapped addresses itself, so no mapped range is listed.)
    if (bare.includes(".") || bare.toLowerCase().startsWith("::ffff:")) return false;
    return !refused.check(bare, "ipv6");
  }
  return false;
}

function resolveAll(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });
}

/**
 * The addresses `hostname` resolves to, when every one of them is public; an {@link AddressRefused}
 * naming the host otherwise (one private answer is enough: a client may pick any of them).
 */
export async function vettedAddresses(
  hostname: string,
  isPublic: (address: string) => boolean = isPublicAddress,
): Promise<LookupAddress[]> {
  const bare = hostname.replace(/^\[|\]$/g, "");
  if (isIP(bare)) {
    if (!isPublic(bare)) throw new AddressRefused(`${hostname} is a loopback, private, link-local or reserved address`);
    return [{ address: bare, family: isIP(bare) }];
  }
  let addresses: LookupAddress[];
  try {
    addresses = await resolveAll(bare);
  } catch {
    throw new AddressRefused(`${hostname} does not resolve`, "unresolvable");
  }
  if (addresses.length === 0) throw new AddressRefused(`${hostname} does not resolve`, "unresolvable");
  const bad = addresses.find((entry) => !isPublic(entry.address));
  if (bad) throw new AddressRefused(`${hostname} resolves to ${bad.address}, a loopback, private, link-local or reserved address`);
  return addresses;
}

/**
 * The check when a user adds or changes a URL the server will fetch (a remote tool server, a webhook
 * endpoint): unless the operator allows private addresses, a host that is, or resolves to, one is
 * refused with `400 address_refused` before anything is stored, naming the operator's `setting` that
 * would allow it (an unresolvable host is refused without that hint: no setting helps). The guard
 * runs again on every connection; this only says no early, in words.
 */
export async function refuseUnsafeUrl(url: string, allowPrivate: boolean, setting: string): Promise<void> {
  if (allowPrivate) return;
  try {
    await vettedAddresses(new URL(url).hostname);
  } catch (error) {
    if (!(error instanceof AddressRefused)) throw error;
    const hint = error.reason === "private" ? `; an operator may allow this with ${setting}=1` : "";
    throw badRequest("address_refused", `${error.message}${hint}`);
  }
}
