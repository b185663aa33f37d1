// What every domain function and route receives: injected, so tests can move time and capture logs.
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Dialect } from './db/connect.ts';
import type { DB } from './db/schema.ts';
import type { DeliveryWakeup } from './features/delivery/wakeup.ts';
import type { OutboundOptions } from './net/outbound.ts';

/** Source of the current time in epoch milliseconds. */
export interface Clock {
  now(): number;
}

/** Source of randomness; always cryptographically strong outside tests. */
export interface Random {
  bytes(n: number): Buffer;
}

/** The service's dependencies, passed explicitly rather than read from globals. */
export interface Deps {
  db: Kysely<DB>;
  dialect: Dialect;
  config: Config;
  clock: Clock;
  random: Random;
  log: Logger;
  /** Wakes this process's delivery workers at once after a transaction made deliveries due (emit, re-send). */
  wakeup: DeliveryWakeup;
  /**
   * Outbound knobs for the admin's "Check connection" (resolver, policy, CA); production leaves it unset. Tests only.
   */
  outbound?: OutboundOptions;
  /**
   * Counts what the process decides (requests, attempts, sign-ins) for /metrics; absent (nothing counted) unless
   * SVC_METRICS_TOKEN is set.
   */
  metrics?: Metrics;
}

/** How a sign-in step ended, as /metrics counts it. */
export type SignInOutcome = 'success' | 'failure' | 'throttled' | 'second_factor_owed';

/** How a passkey sign-in or second-factor step ended, as /metrics counts it (a fixed set of classes). */
export type PasskeyOutcome =
  | 'success'
  | 'invalid'
  | 'expired'
  | 'unknown_credential'
  | 'cloned'
  | 'suspended'
  | 'throttled'
  | 'busy';

/** The counting hooks the domain calls at the moment it decides something; each is one line at its call site. */
export interface Metrics {
  /** A request was answered: method, route template (never the raw URL), status, seconds taken. */
  httpRequest(method: string, route: string, status: number, seconds: number): void;
  /**
   * A delivery attempt ended with a verdict (HTTP status or none); `sinceEmitMs` on a delivery's first attempt only.
   */
  deliveryAttempt(verdict: 'delivered' | 'failed', status: number | null, sinceEmitMs: number | undefined): void;
  /** A password or second-factor step ended. */
  signIn(outcome: SignInOutcome): void;
  /** An identity provider's back-channel logout was accepted or refused; `sessionsEnded` sessions ended by it. */
  backchannelLogout(outcome: 'accepted' | 'refused', sessionsEnded: number): void;
  /** A passkey answer ended: at the sign-in page (passkey alone) or as the second factor. */
  passkey(step: 'sign_in' | 'second_factor', outcome: PasskeyOutcome): void;
}

/** The real clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** The real random source. */
export const systemRandom: Random = { bytes: (n) => crypto.randomBytes(n) };

/** A random url-safe token of `bytes` bytes of entropy. */
export function randomToken(random: Random, bytes = 32): string {
  return random.bytes(bytes).toString('base64url');
}

/** A random row id (128 bits). */
export function newId(random: Random): string {
  return random.bytes(16).toString('base64url');
}

/** SHA-256 hex digest: how session ids and bearer tokens are stored. */
export function sha256(value: string): string {
  return crypto.hash('sha256', value, 'hex');
}

/** Constant-time comparison for secrets; digests first so neither length nor content leaks. */
export function safeEqual(a: string, b: string): boolean {
  const x = crypto.createHash('sha256').update(a, 'utf8').digest();
  const y = crypto.createHash('sha256').update(b, 'utf8').digest();
  return crypto.timingSafeEqual(x, y);
}
