// The one guarded outbound HTTP client: every channel POST goes through here. It resolves the host itself,
// refuses when ANY resolved address is not globally reachable, pins the socket to the vetted addresses and
// re-checks at connect time (so DNS rebinding between check and connect cannot get through), never follows
// redirects, always verifies TLS, bounds time and response size, and reports failures in plain words.
import dns from 'node:dns';
import tls from 'node:tls';
import ipaddr from 'ipaddr.js';
import { Pool, buildConnector, type Dispatcher } from 'undici';
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
  /** Connect timeout and total budget of one request, resolution included (default 10 s). */
  timeoutMs?: number;
  /** At most this many response-body bytes are read, then the body is discarded (default 4 KiB). */
  bodyCapBytes?: number;
}

/** Default per-attempt budget (DESIGN: 10 s). */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Default response-body cap: receivers' replies are never used, only drained. */
export const DEFAULT_BODY_CAP_BYTES = 4096;
/** Idle connection pools are closed after this long. */
const POOL_IDLE_MS = 60_000;
/** Most pools kept open at once; the least recently used is closed beyond it. */
const MAX_POOLS = 256;
/** Most parsed channel URLs kept (cleared when full). */
const MAX_TARGETS = 10_000;

/** What became of one POST: delivered (2xx), failed with a plain-words reason, or aborted by shutdown. */
export type PostOutcome =
  | { kind: 'delivered'; status: number }
  | { kind: 'failed'; status: number | null; error: string }
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

/** Where a request may go: the parsed URL, and how the connected socket's address must be judged. */
type Target = {
  url: URL;
  literal: string | undefined;
  loopbackException: boolean;
  /** An IP literal's one address, which needs no resolution. */
  pinned: ResolvedAddress[] | undefined;
  /** The origin, and the path with the query, as the pool and the request line take them. */
  origin: string;
  path: string;
};

/** A checked target, with what every request to it needs worked out once. */
function makeTarget(url: URL, literal: string | undefined, loopbackException: boolean): Target {
  const pinned = literal ? [{ address: literal, family: literal.includes(':') ? (6 as const) : (4 as const) }] : undefined;
  return { url, literal, loopbackException, pinned, origin: url.origin, path: url.pathname + url.search };
}

function checkTarget(raw: string, policy: AddressPolicy): Target | PlainFailure {
  if (!URL.canParse(raw)) return new PlainFailure('blocked: not an absolute URL');
  const url = new URL(raw);
  if (url.username || url.password) return new PlainFailure('blocked: the URL carries credentials');
  const literal = ipLiteralOfHostname(url.hostname);
  if (url.protocol === 'http:') {
    // SPEC 2.5: plain http only to a loopback IP literal, never to a name.
    if (literal && isLoopbackAddress(literal)) return makeTarget(url, literal, true);
    return new PlainFailure('blocked: http is allowed only to a loopback IP address');
  }
  if (url.protocol !== 'https:') return new PlainFailure(`blocked: ${url.protocol.replace(':', '')} URLs are not allowed`);
  if (literal && !policy(literal)) return new PlainFailure(BLOCKED_LITERAL);
  return makeTarget(url, literal, false);
}

/** Builds the guarded client. */
export function createOutboundClient(options: OutboundOptions = {}): OutboundClient {
  const resolver = options.resolver ?? systemResolver;
  const policy = options.policy ?? isGloballyReachable;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const cap = options.bodyCapBytes ?? DEFAULT_BODY_CAP_BYTES;
  const ca = options.extraCa?.length ? [...tls.rootCertificates, ...options.extraCa] : undefined;
  const timedOut = `timed out after ${formatSeconds(timeoutMs)} s`;
  // One pool per (origin, vetted address set): a keep-alive connection is only reused while the name
  // still resolves to exactly the addresses it was opened to.
  const pools = new Map<string, { pool: Pool; lastUsed: number }>();

  function poolFor(target: Target, vetted: ResolvedAddress[]): Pool {
    const key = `${target.origin}|${vetted.map((a) => a.address).join(',')}`;
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
    const pool = new Pool(target.origin, { connect: guardedConnector(target, vetted), connections: null, pipelining: 1 });
    pools.set(key, { pool, lastUsed: now });
    return pool;
  }

  function closePool(key: string, entry: { pool: Pool }): void {
    pools.delete(key);
    void entry.pool.close().catch(() => undefined);
  }

  // The dialer: resolution is pinned to the vetted addresses (re-checked here), and the connected
  // socket's peer address is checked once more before a byte of the request is written.
  function guardedConnector(target: Target, vetted: ResolvedAddress[]): buildConnector.connector {
    const allowedPeer = (address: string) =>
      target.loopbackException ? isLoopbackAddress(address) && sameAddress(address, target.literal!) : policy(address);
    const lookup = (_host: string, opts: { all?: boolean; family?: number | string }, cb: (...args: any[]) => void) => {
      const usable = vetted.filter((a) => !opts.family || Number(opts.family) === a.family || opts.family === `IPv${a.family}`);
      if (usable.length === 0 || !usable.every((a) => policy(a.address))) return cb(new PlainFailure(BLOCKED_RESOLVED));
      if (opts.all) return cb(null, usable.map((a) => ({ address: a.address, family: a.family })));
      return cb(null, usable[0]!.address, usable[0]!.family);
    };
    const base = buildConnector({ timeout: timeoutMs, rejectUnauthorized: true, ...(ca ? { ca } : {}), lookup: lookup as any });
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

  async function vet(target: Target): Promise<ResolvedAddress[]> {
    let answers: ResolvedAddress[];
    try {
      answers = await resolver(target.url.hostname);
    } catch {
      throw new PlainFailure('DNS lookup failed');
    }
    if (answers.length === 0) throw new PlainFailure('DNS lookup failed');
    // Every answer must pass, not just the first: a name with one internal address is refused outright.
    if (!answers.every((a) => policy(a.address))) throw new PlainFailure(BLOCKED_RESOLVED);
    return answers;
  }

  // Parsed and checked targets by URL string: the check is a pure function of the URL and the policy.
  const targets = new Map<string, Target | PlainFailure>();
  function targetOf(raw: string): Target | PlainFailure {
    let target = targets.get(raw);
    if (!target) {
      if (targets.size >= MAX_TARGETS) targets.clear();
      target = checkTarget(raw, policy);
      targets.set(raw, target);
    }
    return target;
  }

  return {
    post(url, body, headers, stop) {
      if (stop?.aborted) return Promise.resolve(ABORTED);
      const target = targetOf(url);
      if (target instanceof PlainFailure) return Promise.resolve({ kind: 'failed', status: null, error: target.plain });
      // undici's dispatch API directly (no response stream, no AbortController per attempt): the status line decides
      // the verdict, at most `cap` body bytes are read, and the budget timer or a stop cuts the request short.
      return new Promise<PostOutcome>((resolve) => {
        let settled = false;
        let status: number | null = null;
        let controller: Dispatcher.DispatchController | undefined;
        let cut: Error | undefined;
        let read = 0;
        const settle = (outcome: PostOutcome) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          stop?.removeEventListener('abort', onStop);
          resolve(outcome);
        };
        // Once the status line is in, it is the verdict whatever happens to the body; before it, `outcome` is.
        const cutShort = (outcome: PostOutcome, reason: Error) => {
          cut = reason;
          settle(status !== null ? verdictOf(status) : outcome);
          controller?.abort(reason);
        };
        const timer = setTimeout(() => cutShort({ kind: 'failed', status: null, error: timedOut }, new PlainFailure(timedOut)), timeoutMs);
        const onStop = () => cutShort(ABORTED, new Error('stopped'));
        stop?.addEventListener('abort', onStop, { once: true });
        const handler: Dispatcher.DispatchHandler = {
          onRequestStart(c) {
            controller = c;
            if (cut) c.abort(cut);
          },
          onResponseStart(_c, s) {
            if (s >= 200) status = s; // 1xx interim responses are not the answer
          },
          onResponseData(c, chunk) {
            read += chunk.length;
            if (read > cap) cutShort(verdictOf(status!), new Error('response body over the cap')); // the connection is dropped
          },
          onResponseEnd() {
            settle(verdictOf(status!));
          },
          onResponseError(_c, err) {
            settle(status !== null ? verdictOf(status) : { kind: 'failed', status: null, error: describeFailure(err, timedOut) });
          },
        };
        const send = (vetted: ResolvedAddress[]) => {
          if (settled) return;
          poolFor(target, vetted).dispatch(
            { origin: target.origin, path: target.path, method: 'POST', headers, body, headersTimeout: timeoutMs, bodyTimeout: timeoutMs },
            handler,
          );
        };
        if (target.pinned) send(target.pinned);
        else vet(target).then(send, (err) => settle({ kind: 'failed', status: null, error: describeFailure(err, timedOut) }));
      });
    },
    async close() {
      const all = [...pools.values()];
      pools.clear();
      await Promise.all(all.map((p) => p.pool.close().catch(() => undefined)));
    },
  };
}

const ABORTED: PostOutcome = { kind: 'aborted' };

/** The verdict a status line gives (SPEC 6.6): 2xx delivered; 3xx (never followed), 4xx and 5xx failed. */
function verdictOf(s: number): PostOutcome {
  if (s >= 200 && s < 300) return { kind: 'delivered', status: s };
  if (s >= 300 && s < 400) return { kind: 'failed', status: s, error: `redirect ${s} not followed` };
  return { kind: 'failed', status: s, error: `HTTP ${s}` };
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
export function describeFailure(err: unknown, timedOut: string): string {
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
