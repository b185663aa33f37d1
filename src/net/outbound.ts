// The one guarded outbound HTTP client: every channel POST goes through here. It resolves the host itself,
// refuses when ANY resolved address is not globally reachable, pins the socket to the vetted addresses and
// re-checks at connect time (so DNS rebinding between check and connect cannot get through), never follows
// redirects, always verifies TLS, bounds time and response size, and reports failures in plain words.
import dns from 'node:dns';
import net from 'node:net';
import tls from 'node:tls';
import ipaddr from 'ipaddr.js';
import { Pool, buildConnector, request } from 'undici';
import { classifyAddress, ipLiteralOfHostname, isGloballyReachable, isLoopbackAddress } from './address-policy.ts';

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
const BLOCKED_LITERAL = 'blocked: internal address';

/** A failure we raise ourselves, already in plain words. */
class PlainFailure extends Error {
  constructor(readonly plain: string) {
    super(plain);
  }
}

/** Where a request may go: the parsed URL, its IP literal if any, and whether it is SPEC 2.5's loopback exception. */
type Target = { url: URL; literal: string | undefined; loopbackException: boolean };

function checkTarget(raw: string, policy: AddressPolicy): Target | PlainFailure {
  if (!URL.canParse(raw)) return new PlainFailure('blocked: not an absolute URL');
  const url = new URL(raw);
  if (url.username || url.password) return new PlainFailure('blocked: the URL carries credentials');
  const literal = ipLiteralOfHostname(url.hostname);
  if (url.protocol === 'http:') {
    // SPEC 2.5: plain http only to a loopback IP literal, never to a name.
    if (literal && isLoopbackAddress(literal)) return { url, literal, loopbackException: true };
    return new PlainFailure('blocked: http is allowed only to a loopback IP address');
  }
  if (url.protocol !== 'https:') return new PlainFailure(`blocked: ${url.protocol.replace(':', '')} URLs are not allowed`);
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
    const pool = new Pool(target.url.origin, { connect: guardedConnector(target, vetted, policy, timeoutMs, ca), connections: null, pipelining: 1 });
    pools.set(key, { pool, lastUsed: now });
    return pool;
  }

  function closePool(key: string, entry: { pool: Pool }): void {
    pools.delete(key);
    void entry.pool.close().catch(() => undefined);
  }

  async function vet(target: Target, signal: AbortSignal): Promise<ResolvedAddress[]> {
    const answers = await resolveTarget(target, resolver, signal);
    // A literal was judged by checkTarget. Of a name, every answer must pass, not just the first: one internal address refuses it.
    if (!target.literal && refusedAddresses(answers, policy).length > 0) throw new PlainFailure(BLOCKED_RESOLVED);
    return answers;
  }

  return {
    async post(url, body, headers, stop) {
      if (stop?.aborted) return ABORTED;
      const target = checkTarget(url, policy);
      if (target instanceof PlainFailure) return { kind: 'failed', status: null, error: target.plain, excerpt: null };
      const budget = attemptBudget(stop, timeoutMs, new PlainFailure(timedOut));
      const { signal } = budget;
      let status: number | null = null;
      const read: Buffer[] = [];
      try {
        const vetted = await vet(target, signal);
        const res = await request(target.url, { dispatcher: poolFor(target, vetted), method: 'POST', headers, body, signal });
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

/** One step of a connection check: what it found, in plain words. A step after a failed one is skipped. */
export interface CheckStep {
  step: 'resolve' | 'policy' | 'tcp' | 'tls';
  outcome: 'ok' | 'failed' | 'skipped';
  detail: string;
}

/** A connection check: every step in order, and whether the receiver could be reached. */
export interface ConnectionCheck {
  ok: boolean;
  steps: CheckStep[];
}

/** Default budget of each step of a connection check. */
export const CHECK_STEP_TIMEOUT_MS = 5000;

const CHECK_STEPS: CheckStep['step'][] = ['resolve', 'policy', 'tcp', 'tls'];

/**
 * Checks that a channel URL can be reached, without sending it anything (channels only receive messages): resolves the
 * host, applies the address policy, opens TCP through the same pinned lookup and peer check as a delivery, then for
 * https completes the TLS handshake (same trust as a delivery) and reports the certificate. No HTTP request is
 * written; the socket is closed at once. Each step has its own time budget. Never throws for network failures.
 */
export async function checkConnection(url: string, options: OutboundOptions & { stepTimeoutMs?: number } = {}): Promise<ConnectionCheck> {
  const policy = options.policy ?? isGloballyReachable;
  const stepMs = options.stepTimeoutMs ?? CHECK_STEP_TIMEOUT_MS;
  const timedOut = `timed out after ${formatSeconds(stepMs)} s`;
  const steps: CheckStep[] = [];
  const done = (ok: boolean): ConnectionCheck => {
    for (const step of CHECK_STEPS) if (!steps.some((s) => s.step === step)) steps.push({ step, outcome: 'skipped', detail: 'Not tried.' });
    return { ok, steps };
  };
  const target = checkTarget(url, policy);
  if (target instanceof PlainFailure) {
    const literal = URL.canParse(url) ? ipLiteralOfHostname(new URL(url).hostname) : undefined;
    if (literal) steps.push({ step: 'resolve', outcome: 'ok', detail: `The host is an IP address (${literal}); nothing to resolve.` });
    const why = literal && target.plain === BLOCKED_LITERAL ? refusal([literal]) : `Refused: ${target.plain.replace(/^blocked: /, '')}.`;
    steps.push({ step: 'policy', outcome: 'failed', detail: `${why} No connection was attempted.` });
    return done(false);
  }

  const budget = attemptBudget(undefined, stepMs, new PlainFailure(timedOut));
  let vetted: ResolvedAddress[];
  try {
    vetted = await resolveTarget(target, options.resolver ?? systemResolver, budget.signal);
  } catch (err) {
    steps.push({ step: 'resolve', outcome: 'failed', detail: `Could not resolve ${target.url.hostname}: ${describeFailure(err, timedOut)}.` });
    return done(false);
  } finally {
    budget.release();
  }
  const list = vetted.map((a) => a.address).join(', ');
  steps.push({
    step: 'resolve',
    outcome: 'ok',
    detail: target.literal
      ? `The host is an IP address (${target.literal}); nothing to resolve.`
      : `${target.url.hostname} resolved to ${vetted.length} ${vetted.length === 1 ? 'address' : 'addresses'}: ${list}.`,
  });
  const refused = target.literal ? [] : refusedAddresses(vetted, policy);
  if (refused.length > 0) {
    steps.push({ step: 'policy', outcome: 'failed', detail: `${refusal(refused.map((a) => a.address))} No connection was attempted.` });
    return done(false);
  }
  steps.push({
    step: 'policy',
    outcome: 'ok',
    detail: target.loopbackException ? 'Allowed: plain http:// to a loopback IP address, the one exception.' : 'Allowed: every address is publicly reachable.',
  });

  const port = Number(target.url.port) || (target.url.protocol === 'https:' ? 443 : 80);
  let socket: net.Socket | undefined;
  try {
    const started = performance.now();
    socket = await openPinnedSocket(target, vetted, policy, port, stepMs, timedOut);
    steps.push({ step: 'tcp', outcome: 'ok', detail: `Connected to ${socket.remoteAddress} port ${port} in ${elapsed(started)} ms.` });
  } catch (err) {
    steps.push({ step: 'tcp', outcome: 'failed', detail: `Could not connect to port ${port}: ${describeFailure(firstOf(err), timedOut)}.` });
    return done(false);
  }
  if (target.loopbackException) {
    socket.destroy();
    steps.push({ step: 'tls', outcome: 'skipped', detail: 'Not used: plain http:// to a loopback address.' });
    return done(true);
  }
  try {
    const started = performance.now();
    const secure = await handshake(socket, target, trustedCa(options), stepMs, timedOut);
    steps.push({ step: 'tls', outcome: 'ok', detail: `Handshake ok in ${elapsed(started)} ms (${secure.getProtocol()}): ${describeCertificate(secure.getPeerCertificate())}.` });
    secure.destroy();
    return done(true);
  } catch (err) {
    steps.push({ step: 'tls', outcome: 'failed', detail: `Handshake failed: ${describeFailure(err, timedOut)}.` });
    return done(false);
  } finally {
    socket.destroy();
  }
}

/** The policy's refusal of these addresses, naming the special-purpose range of each when it is one. */
function refusal(addresses: string[]): string {
  const named = addresses.map((a) => {
    const verdict = classifyAddress(a);
    return verdict.global ? a : `${a} (${verdict.reason})`;
  });
  return `Refused by the address policy: ${named.join(', ')} ${named.length === 1 ? 'is an internal address' : 'are internal addresses'}.`;
}

/** Opens TCP to the target through the pinned lookup, then applies the peer rule a delivery's dialer applies. */
function openPinnedSocket(target: Target, vetted: ResolvedAddress[], policy: AddressPolicy, port: number, ms: number, timedOut: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: target.literal ?? target.url.hostname, port, lookup: pinnedLookup(vetted, policy) as any });
    const timer = setTimeout(() => socket.destroy(new PlainFailure(timedOut)), ms);
    socket.once('error', (err) => (clearTimeout(timer), reject(err)));
    socket.once('connect', () => {
      clearTimeout(timer);
      const peer = socket.remoteAddress;
      if (peer && peerAllowed(target, policy)(peer)) return resolve(socket);
      socket.destroy();
      reject(new PlainFailure(target.literal ? BLOCKED_LITERAL : BLOCKED_RESOLVED));
    });
  });
}

/** The TLS handshake over an open socket, verified as a delivery's is (the host name for names, the address for literals). */
function handshake(socket: net.Socket, target: Target, ca: string[] | undefined, ms: number, timedOut: string): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const host = target.literal ?? target.url.hostname;
    const secure = tls.connect({ socket, host, servername: target.literal ? undefined : host, rejectUnauthorized: true, ...(ca ? { ca } : {}) });
    const timer = setTimeout(() => secure.destroy(new PlainFailure(timedOut)), ms);
    secure.once('error', (err) => (clearTimeout(timer), reject(err)));
    secure.once('secureConnect', () => (clearTimeout(timer), resolve(secure)));
  });
}

/** "certificate for <subject>, issued by <issuer>, valid until <date> UTC". */
function describeCertificate(cert: tls.PeerCertificate): string {
  const name = (part: Record<string, string | string[]> | undefined) => [part?.CN ?? part?.O ?? 'an unnamed subject'].flat().join(', ');
  const until = Number.isNaN(Date.parse(cert.valid_to)) ? cert.valid_to : new Date(cert.valid_to).toISOString().slice(0, 16).replace('T', ' ');
  return `certificate for ${name(cert.subject as any)}, issued by ${name(cert.issuer as any)}, valid until ${until} UTC`;
}

/** Happy-eyeballs connects report every address's failure together: the first one names the cause. */
function firstOf(err: unknown): unknown {
  return err instanceof AggregateError && err.errors.length > 0 ? err.errors[0] : err;
}

function elapsed(started: number): number {
  return Math.max(0, Math.round(performance.now() - started));
}

/** The CA list when extra certificates are trusted (the system roots plus them), else undefined (the defaults). */
function trustedCa(options: OutboundOptions): string[] | undefined {
  return options.extraCa?.length ? [...tls.rootCertificates, ...options.extraCa] : undefined;
}

/** Resolves the target's host (an IP literal stands for itself); throws a PlainFailure when the name does not resolve. */
async function resolveTarget(target: Target, resolver: Resolver, signal: AbortSignal): Promise<ResolvedAddress[]> {
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
function refusedAddresses(answers: ResolvedAddress[], policy: AddressPolicy): ResolvedAddress[] {
  return answers.filter((a) => !policy(a.address));
}

/** The connect-time rule for the socket's peer: the loopback exception's own literal, or an address the policy allows. */
function peerAllowed(target: Target, policy: AddressPolicy): (address: string) => boolean {
  return (address) => (target.loopbackException ? isLoopbackAddress(address) && sameAddress(address, target.literal!) : policy(address));
}

/** A dns.lookup stand-in pinned to the vetted addresses, each re-checked against the policy when the socket is opened. */
function pinnedLookup(vetted: ResolvedAddress[], policy: AddressPolicy) {
  return (_host: string, opts: { all?: boolean; family?: number | string }, cb: (...args: any[]) => void) => {
    const usable = vetted.filter((a) => !opts.family || Number(opts.family) === a.family || opts.family === `IPv${a.family}`);
    if (usable.length === 0 || !usable.every((a) => policy(a.address))) return cb(new PlainFailure(BLOCKED_RESOLVED));
    if (opts.all) return cb(null, usable.map((a) => ({ address: a.address, family: a.family })));
    return cb(null, usable[0]!.address, usable[0]!.family);
  };
}

/**
 * The dialer: resolution is pinned to the vetted addresses (re-checked there), and the connected socket's peer
 * address is checked once more before a byte of the request is written.
 */
function guardedConnector(target: Target, vetted: ResolvedAddress[], policy: AddressPolicy, timeoutMs: number, ca: string[] | undefined): buildConnector.connector {
  const allowedPeer = peerAllowed(target, policy);
  const base = buildConnector({ timeout: timeoutMs, rejectUnauthorized: true, ...(ca ? { ca } : {}), lookup: pinnedLookup(vetted, policy) as any });
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
 * (reason `timedOut`). A controller per attempt, released when done, rather than `AbortSignal.any()` over the
 * worker's long-lived stop signal: on Node 20 every `any()` stays registered on its sources (measured: ~300 B per call).
 */
function attemptBudget(stop: AbortSignal | undefined, ms: number, timedOut: Error) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(timedOut), ms);
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

/** Settles as `work` does, or rejects with the signal's reason once it aborts (a lookup cannot be cancelled, only left). */
function within<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The verdict a status line gives (SPEC 6.6): 2xx delivered; 3xx (never followed), 4xx and 5xx failed. */
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
  if (encoded.length > EXCERPT_BYTES) text = new TextDecoder().decode(encoded.subarray(0, EXCERPT_BYTES), { stream: true });
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

/** Turns a thrown network error into the plain words of SPEC 6.6's failure classes. */
function describeFailure(err: unknown, timedOut: string): string {
  const seen = new Set<unknown>();
  for (let e: any = err; e && typeof e === 'object' && !seen.has(e); e = e.cause) {
    seen.add(e);
    if (e instanceof PlainFailure) return e.plain;
    const code = String(e.code ?? '');
    if (['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT'].includes(code)) return timedOut;
    if (code === 'ECONNREFUSED') return 'connection refused';
    if (['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'ENODATA', 'ESERVFAIL'].includes(code)) return 'DNS lookup failed';
    if (TLS_UNTRUSTED.has(code)) return 'TLS certificate not trusted';
    if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'HOSTNAME_MISMATCH') return 'TLS certificate does not match the host name';
    if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') return 'TLS certificate expired or not yet valid';
    if (code.startsWith('ERR_SSL_') || code === 'EPROTO' || code.startsWith('ERR_TLS_')) return 'TLS handshake failed';
    if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET' || code === 'UND_ERR_CLOSED') return 'connection closed by the receiver';
    if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'EADDRNOTAVAIL') return 'host unreachable';
  }
  return 'request failed';
}

function sameAddress(a: string, b: string): boolean {
  return ipaddr.isValid(a) && ipaddr.isValid(b) && ipaddr.process(a).toString() === ipaddr.process(b).toString();
}

function formatSeconds(ms: number): string {
  return Number((ms / 1000).toFixed(3)).toString();
}
