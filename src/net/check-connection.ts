// Check connection: whether a channel's receiver can be reached, step by step, without sending it
// anything. It goes through the guarded client's own resolution, address policy, pinned lookup and TLS trust
// (outbound.ts), so a check can reach exactly what a delivery could.
import net from 'node:net';
import tls from 'node:tls';
import { classifyAddress, ipLiteralOfHostname, isGloballyReachable } from './address-policy.ts';
import {
  BLOCKED_LITERAL,
  BLOCKED_RESOLVED,
  PlainFailure,
  attemptBudget,
  checkTarget,
  describeFailure,
  formatSeconds,
  peerAllowed,
  pinnedLookup,
  refusedAddresses,
  resolveTarget,
  systemResolver,
  trustedCa,
  type AddressPolicy,
  type OutboundOptions,
  type ResolvedAddress,
  type Target,
} from './outbound.ts';

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
export async function checkConnection(
  url: string,
  options: OutboundOptions & { stepTimeoutMs?: number } = {},
): Promise<ConnectionCheck> {
  const policy = options.policy ?? isGloballyReachable;
  const stepMs = options.stepTimeoutMs ?? CHECK_STEP_TIMEOUT_MS;
  const timedOut = `timed out after ${formatSeconds(stepMs)} s`;
  const steps: CheckStep[] = [];
  const done = (ok: boolean): ConnectionCheck => {
    for (const step of CHECK_STEPS)
      if (!steps.some((s) => s.step === step)) steps.push({ step, outcome: 'skipped', detail: 'Not tried.' });
    return { ok, steps };
  };
  const target = checkTarget(url, policy);
  if (target instanceof PlainFailure) {
    const literal = URL.canParse(url) ? ipLiteralOfHostname(new URL(url).hostname) : undefined;
    if (literal)
      steps.push({
        step: 'resolve',
        outcome: 'ok',
        detail: `The host is an IP address (${literal}); nothing to resolve.`,
      });
    const why =
      literal && target.plain === BLOCKED_LITERAL
        ? refusal([literal])
        : `Refused: ${target.plain.replace(/^blocked: /, '')}.`;
    steps.push({ step: 'policy', outcome: 'failed', detail: `${why} No connection was attempted.` });
    return done(false);
  }

  const budget = attemptBudget(undefined, stepMs, timedOut);
  let vetted: ResolvedAddress[];
  try {
    vetted = await resolveTarget(target, options.resolver ?? systemResolver, budget.signal);
  } catch (err) {
    steps.push({
      step: 'resolve',
      outcome: 'failed',
      detail: `Could not resolve ${target.url.hostname}: ${describeFailure(err, timedOut)}.`,
    });
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
    steps.push({
      step: 'policy',
      outcome: 'failed',
      detail: `${refusal(refused.map((a) => a.address))} No connection was attempted.`,
    });
    return done(false);
  }
  steps.push({
    step: 'policy',
    outcome: 'ok',
    detail: target.loopbackException
      ? 'Allowed: plain http:// to a loopback IP address, the one exception.'
      : 'Allowed: every address is publicly reachable.',
  });

  const port = Number(target.url.port) || (target.url.protocol === 'https:' ? 443 : 80);
  let socket: net.Socket | undefined;
  try {
    const started = performance.now();
    socket = await openPinnedSocket(target, vetted, policy, port, stepMs, timedOut);
    steps.push({
      step: 'tcp',
      outcome: 'ok',
      detail: `Connected to ${socket.remoteAddress} port ${port} in ${elapsed(started)} ms.`,
    });
  } catch (err) {
    steps.push({
      step: 'tcp',
      outcome: 'failed',
      detail: `Could not connect to port ${port}: ${describeFailure(firstOf(err), timedOut)}.`,
    });
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
    steps.push({
      step: 'tls',
      outcome: 'ok',
      detail: `Handshake ok in ${elapsed(started)} ms (${secure.getProtocol()}): ${describeCertificate(secure.getPeerCertificate())}.`,
    });
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
function openPinnedSocket(
  target: Target,
  vetted: ResolvedAddress[],
  policy: AddressPolicy,
  port: number,
  ms: number,
  timedOut: string,
): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({
      host: target.literal ?? target.url.hostname,
      port,
      lookup: pinnedLookup(vetted, policy) as any,
    });
    const timer = setTimeout(() => socket.destroy(new PlainFailure(timedOut)), ms);
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.once('connect', () => {
      clearTimeout(timer);
      const peer = socket.remoteAddress;
      if (peer && peerAllowed(target, policy)(peer)) return resolve(socket);
      socket.destroy();
      reject(new PlainFailure(target.literal ? BLOCKED_LITERAL : BLOCKED_RESOLVED));
    });
  });
}

/**
 * The TLS handshake over an open socket, verified as a delivery's is (the host name for names, the address for
 * literals).
 */
function handshake(
  socket: net.Socket,
  target: Target,
  ca: string[] | undefined,
  ms: number,
  timedOut: string,
): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const host = target.literal ?? target.url.hostname;
    const secure = tls.connect({
      socket,
      host,
      servername: target.literal ? undefined : host,
      rejectUnauthorized: true,
      ...(ca ? { ca } : {}),
    });
    const timer = setTimeout(() => secure.destroy(new PlainFailure(timedOut)), ms);
    secure.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    secure.once('secureConnect', () => {
      clearTimeout(timer);
      resolve(secure);
    });
  });
}

/** "certificate for <subject>, issued by <issuer>, valid until <date> UTC". */
function describeCertificate(cert: tls.PeerCertificate): string {
  const name = (part: Record<string, string | string[]> | undefined) =>
    [part?.CN ?? part?.O ?? 'an unnamed subject'].flat().join(', ');
  const until = Number.isNaN(Date.parse(cert.valid_to))
    ? cert.valid_to
    : new Date(cert.valid_to).toISOString().slice(0, 16).replace('T', ' ');
  return `certificate for ${name(cert.subject as any)}, issued by ${name(cert.issuer as any)}, valid until ${until} UTC`;
}

/** Happy-eyeballs connects report every address's failure together: the first one names the cause. */
function firstOf(err: unknown): unknown {
  return err instanceof AggregateError && err.errors.length > 0 ? err.errors[0] : err;
}

function elapsed(started: number): number {
  return Math.max(0, Math.round(performance.now() - started));
}
