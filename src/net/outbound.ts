// The one guarded outbound HTTP client: every channel POST goes through here. It resolves the host itself,
// refuses when ANY resolved address is not globally reachable, pins the socket to the vetted addresses and
// re-checks at connect time (so DNS rebinding between check and connect cannot get through), never follows
// redirects, always verifies TLS, bounds time and response size, and reports failures in plain words. Its
// resolution, policy, pinning and failure wording are exported for the connection check (check-connection.ts).
import dns from 'node:dns';
import tls from 'node:tls';
import ipaddr from 'ipaddr.js';
import { Pool, buildConnector, request } from 'undici';
import { ipLiteralOfHostname, isGloballyReachable, isLoopbackAddress } from './address-policy.ts';

/** One address a host name resolved to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has; rejects when the name does not resolve. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** Decides whether an address may be connected to. */
export type AddressPolicy = (address: string) => boolean;

/** Knobs of the guarded client; the defaults are the production behaviour and only tests inject others. */
export interface OutboundOptions {
  /** How host names are resolved (default: the system resolver, every address). */
  resolver?: Resolver;
  /** Which addresses may be reached (default: globally reachable only, by the IANA table). */
  policy?: AddressPolicy;
  /** PEM certificates trusted in addition to the system roots (tests' local HTTPS receiver); never replaces them. */
  extraCa?: string[];
  /** The whole budget of one attempt: resolution, connect, response headers and body (default 10 s). */
  timeoutMs?: number;
  /** At most this many response-body bytes are read, then the connection is dropped (default 4 KiB). */
  bodyCapBytes?: number;
}

/** Default per-attempt budget (DESIGN: 10 s). */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Default response-body cap: only the excerpt of a reply is kept, so little more is worth reading. */
const DEFAULT_BODY_CAP_BYTES = 4096;
/** The stored response excerpt is at most this many UTF-8 bytes (DESIGN: 1 KiB). */
export const EXCERPT_BYTES = 1024;
/** Idle connection pools are closed after this long. */
const POOL_IDLE_MS = 60_000;
/** Most pools kept open at once; the least recently used is closed beyond it. */
const MAX_POOLS = 256;

/** What became of one POST: delivered (2xx), failed with a plain-words reason, or aborted by the caller's stop. */
export type PostOutcome =
  | { kind: 'delivered'; status: number; excerpt: string | null }
  | { kind: 'failed'; status: number | null; error: string; excerpt: string | null }
  | { kind: 'aborted' };

/** The guarded client. */
export interface OutboundClient {
  /** POSTs `body` to `url` with `headers`; never throws for network or HTTP failures. */
  post(url: string, body: string, headers: Record<string, string>, signal?: AbortSignal): Promise<PostOutcome>;
  /** Closes every pooled connection. */
  close(): Promise<void>;
}

/** The production resolver: every A and AAAA answer, as the system resolver returns them. */
export const systemResolver: Resolver = async (hostname) => {
  const answers = await dns.promises.lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** Refusals in plain words, as the channel surface shows them. */
export const BLOCKED_RESOLVED = 'blocked: resolves to an internal address';
export const BLOCKED_LITERAL = 'blocked: internal address';

/** A failure we raise ourselves, already in plain words. */
export class PlainFailure extends Error {
  constructor(readonly plain: string) {
    super(plain);
  }
}

/** Where a request may go: the parsed URL, its IP literal if any, and whether it is plain http's loopback exception. */
export type Target = { url: URL; literal: string | undefined; loopbackException: boolean };

export function checkTarget(raw: string, policy: AddressPolicy): Target | PlainFailure {
  if (!URL.canParse(raw)) return new PlainFailure('blocked: not an absolute URL');
  const url = new URL(raw);
  if (url.username || url.password) return new PlainFailure('blocked: the URL carries credentials');
  const literal = ipLiteralOfHostname(url.hostname);
  if (url.protocol === 'http:') {
    // Plain http only to a loopback IP literal, never to a name.
    if (literal && isLoopbackAddress(literal)) return { url, literal, loopbackException: true };
    return new PlainFailure('blocked: http is allowed only to a loopback IP address');
  }
  if (url.protocol !== 'https:')
    return new PlainFailure(`blocked: ${url.protocol.replace(':', '')} URLs are not allowed`);
  if (literal && !policy(literal)) return new PlainFailure(BLOCKED_LITERAL);
  return { url, literal, loopbackException: false };
}

/** Builds the guarded client. */
export function createOutboundClient(options: OutboundOptions = {}): OutboundClient {
  const resolver = options.resolver ?? systemResolver;
  const policy = options.policy ?? isGloballyReachable;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const cap = options.bodyCapBytes ?? DEFAULT_BODY_CAP_BYTES;
  const ca = trustedCa(options);
  const timedOut = `timed out after ${formatSeconds(timeoutMs)} s`;
  // One pool per (origin, vetted address set): a keep-alive connection is only reused while the name
  // still resolves to exactly the addresses it was opened to.
  const pools = new Map<string, { pool: Pool; lastUsed: number }>();

  function poolFor(target: Target, vetted: ResolvedAddress[]): Pool {
    const key = `${target.url.origin}|${vetted.map((a) => a.address).join(',')}`;
    const now = Date.now();
    const hit = pools.get(key);
    if (hit) {
      hit.lastUsed = now;
      return hit.pool;
    }
    // A new pool: first close the idle ones, then, while still at the bound, the least recently used.
    for (const [k, entry] of pools) if (now - entry.lastUsed >= POOL_IDLE_MS) closePool(k, entry);
    while (pools.size >= MAX_POOLS) {
      let oldest: [string, { pool: Pool; lastUsed: number }] | undefined;
      for (const e of pools) if (!oldest || e[1].lastUsed < oldest[1].lastUsed) oldest = e;
      closePool(...oldest!);
    }
    const pool = new Pool(target.url.origin, {
      connect: guardedConnector(target, vetted, policy, timeoutMs, ca),
      connections: null,
      pipelining: 1,
    });
    pools.set(key, { pool, lastUsed: now });
    return pool;
  }

  function closePool(key: string, entry: { pool: Pool }): void {
    pools.delete(key);
    void entry.pool.close().catch(() => undefined);
  }

  async function vet(target: Target, signal: AbortSignal): Promise<ResolvedAddress[]> {
    const answers = await resolveTarget(target, resolver, signal);
    // A literal was judged by checkTarget. Of a name, every answer must pass, not just the first: one internal address
    // refuses it.
    if (!target.literal && refusedAddresses(answers, policy).length > 0) throw new PlainFailure(BLOCKED_RESOLVED);
    return answers;
  }

  return {
    async post(url, body, headers, stop) {
      if (stop?.aborted) return ABORTED;
      const target = checkTarget(url, policy);
      if (target instanceof PlainFailure) return { kind: 'failed', status: null, error: target.plain, excerpt: null };
      const budget = attemptBudget(stop, timeoutMs, timedOut);
      const { signal } = budget;
      let status: number | null = null;
      const read: Buffer[] = [];
      try {
        const vetted = await vet(target, signal);
        const res = await request(target.url, {
          dispatcher: poolFor(target, vetted),
          method: 'POST',
          headers,
          body,
          signal,
        });
        status = res.statusCode; // undici hands 1xx interim responses to onInfo, never here
        // The status line is the verdict; of the body, at most `cap` bytes are read, then the connection is dropped.
        let size = 0;
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          read.push(chunk);
          size += chunk.length;
          if (size > cap) break; // leaving the loop destroys the body, which closes the socket
        }
        return verdictOf(status, excerptOf(read));
      } catch (err) {
        // Once the status line is in, it is the verdict whatever happens to the body.
        if (status !== null) return verdictOf(status, excerptOf(read));
        if (signal.aborted && signal.reason === STOPPED) return ABORTED;
        return { kind: 'failed', status: null, error: describeFailure(err, timedOut), excerpt: null };
      } finally {
        budget.release();
      }
    },
    async close() {
      const all = [...pools.values()];
      pools.clear();
      await Promise.all(all.map((p) => p.pool.close().catch(() => undefined)));
    },
  };
}

/** The CA list when extra certificates are trusted (the system roots plus them), else undefined (the defaults). */
export function trustedCa(options: OutboundOptions): string[] | undefined {
  return options.extraCa?.length ? [...tls.rootCertificates, ...options.extraCa] : undefined;
}

/**
 * Resolves the target's host (an IP literal stands for itself); throws a PlainFailure when the name does not resolve.
 */
export async function resolveTarget(
  target: Target,
  resolver: Resolver,
  signal: AbortSignal,
): Promise<ResolvedAddress[]> {
  if (target.literal) return [{ address: target.literal, family: target.literal.includes(':') ? 6 : 4 }];
  let answers: ResolvedAddress[];
  try {
    answers = await within(resolver(target.url.hostname), signal);
  } catch (err) {
    if (signal.aborted) throw err;
    throw new PlainFailure('DNS lookup failed');
  }
  if (answers.length === 0) throw new PlainFailure('DNS lookup failed');
  return answers;
}

/** The resolved addresses the policy refuses. */
export function refusedAddresses(answers: ResolvedAddress[], policy: AddressPolicy): ResolvedAddress[] {
  return answers.filter((a) => !policy(a.address));
}

/**
 * The connect-time rule for the socket's peer: the loopback exception's own literal, or an address the policy allows.
 */
export function peerAllowed(target: Target, policy: AddressPolicy): (address: string) => boolean {
  return (address) =>
    target.loopbackException ? isLoopbackAddress(address) && sameAddress(address, target.literal!) : policy(address);
}

/**
 * A dns.lookup stand-in pinned to the vetted addresses, each re-checked against the policy when the socket is opened.
 */
export function pinnedLookup(vetted: ResolvedAddress[], policy: AddressPolicy) {
  return (_host: string, opts: { all?: boolean; family?: number | string }, cb: (...args: any[]) => void) => {
    const usable = vetted.filter(
      (a) => !opts.family || Number(opts.family) === a.family || opts.family === `IPv${a.family}`,
    );
    if (usable.length === 0 || !usable.every((a) => policy(a.address))) return cb(new PlainFailure(BLOCKED_RESOLVED));
    if (opts.all)
      return cb(
        null,
        usable.map((a) => ({ address: a.address, family: a.family })),
      );
    return cb(null, usable[0]!.address, usable[0]!.family);
  };
}

/**
 * The dialer: resolution is pinned to the vetted addresses (re-checked there), and the connected socket's peer
 * address is checked once more before a byte of the request is written.
 */
function guardedConnector(
  target: Target,
  vetted: ResolvedAddress[],
  policy: AddressPolicy,
  timeoutMs: number,
  ca: string[] | undefined,
): buildConnector.connector {
  const allowedPeer = peerAllowed(target, policy);
  const base = buildConnector({
    timeout: timeoutMs,
    rejectUnauthorized: true,
    ...(ca ? { ca } : {}),
    lookup: pinnedLookup(vetted, policy) as any,
  });
  return (opts, callback) => {
    base(opts, (err, socket) => {
      if (err) return callback(err, null);
      const peer = socket!.remoteAddress;
      if (!peer || !allowedPeer(peer)) {
        socket!.destroy();
        return callback(new PlainFailure(target.literal ? BLOCKED_LITERAL : BLOCKED_RESOLVED), null);
      }
      callback(null, socket!);
    });
  };
}

const ABORTED: PostOutcome = { kind: 'aborted' };
/** The abort reason when the caller's stop signal fired, told apart from the budget running out. */
const STOPPED = new Error('stopped');

/**
 * One signal for the attempt's whole budget: aborted by the caller's stop (reason STOPPED) or when `ms` have passed
 * (reason: a PlainFailure saying `timedOut`, made only then: an Error per attempt costs its stack trace). A controller
 * per attempt, released when done, rather than `AbortSignal.any()` over the worker's long-lived stop signal: on Node 20
 * every `any()` stays registered on its sources (measured: ~300 B per call).
 */
export function attemptBudget(stop: AbortSignal | undefined, ms: number, timedOut: string) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new PlainFailure(timedOut)), ms);
  const onStop = () => controller.abort(STOPPED);
  stop?.addEventListener('abort', onStop, { once: true });
  return {
    signal: controller.signal,
    release() {
      clearTimeout(timer);
      stop?.removeEventListener('abort', onStop);
    },
  };
}

/**
 * Settles as `work` does, or rejects with the signal's reason once it aborts (a lookup cannot be cancelled, only left).
 */
function within<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The verdict a status line gives: 2xx delivered; 3xx (never followed), 4xx and 5xx failed. */
function verdictOf(s: number, excerpt: string | null): PostOutcome {
  if (s >= 200 && s < 300) return { kind: 'delivered', status: s, excerpt };
  if (s >= 300 && s < 400) return { kind: 'failed', status: s, error: `redirect ${s} not followed`, excerpt };
  return { kind: 'failed', status: s, error: `HTTP ${s}`, excerpt };
}

/**
 * The first EXCERPT_BYTES of a body as text, null when empty. A character cut by the byte limit is dropped, invalid
 * bytes and NUL (which PostgreSQL text refuses) become U+FFFD, and the result never exceeds EXCERPT_BYTES as UTF-8.
 */
function excerptOf(chunks: Buffer[]): string | null {
  const head = Buffer.concat(chunks).subarray(0, EXCERPT_BYTES);
  let text = new TextDecoder().decode(head, { stream: true }).replaceAll('\0', '\uFFFD');
  const encoded = Buffer.from(text, 'utf8');
  // Replacement characters take three bytes each, so the text may have grown: cut it again at a character boundary.
  if (encoded.length > EXCERPT_BYTES)
    text = new TextDecoder().decode(encoded.subarray(0, EXCERPT_BYTES), { stream: true });
  return text === '' ? null : text;
}

const TLS_UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_REVOKED',
  'INVALID_CA',
]);

/**
 * Turns a thrown network error into the plain words of its failure class (docs/delivery.md, "Verdicts, retries and
 * dead letters").
 */
export function describeFailure(err: unknown, timedOut: string): string {
  const seen = new Set<unknown>();
  for (let e: any = err; e && typeof e === 'object' && !seen.has(e); e = e.cause) {
    seen.add(e);
    if (e instanceof PlainFailure) return e.plain;
    const code = String(e.code ?? '');
    if (['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT'].includes(code))
      return timedOut;
    if (code === 'ECONNREFUSED') return 'connection refused';
    if (['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'ENODATA', 'ESERVFAIL'].includes(code))
      return 'DNS lookup failed';
    if (TLS_UNTRUSTED.has(code)) return 'TLS certificate not trusted';
    if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'HOSTNAME_MISMATCH')
      return 'TLS certificate does not match the host name';
    if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') return 'TLS certificate expired or not yet valid';
    if (code.startsWith('ERR_SSL_') || code === 'EPROTO' || code.startsWith('ERR_TLS_')) return 'TLS handshake failed';
    if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET' || code === 'UND_ERR_CLOSED')
      return 'connection closed by the receiver';
    if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'EADDRNOTAVAIL') return 'host unreachable';
  }
  return 'request failed';
}

function sameAddress(a: string, b: string): boolean {
  return ipaddr.isValid(a) && ipaddr.isValid(b) && ipaddr.process(a).toString() === ipaddr.process(b).toString();
}

export function formatSeconds(ms: number): string {
  return Number((ms / 1000).toFixed(3)).toString();
}
