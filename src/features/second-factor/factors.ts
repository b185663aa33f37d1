// Which second factors an account has, in the one wording every door shows ("TOTP, 2 passkeys").
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { countPasskeys } from './passkeys.repo.ts';

type Q = Kysely<DB> | Transaction<DB>;

/** An account's second factors: whether TOTP is on, and how many passkeys it holds. */
export interface Factors {
  totp: boolean;
  passkeys: number;
}

/** The kinds, as the API and the command line name them: "totp" and "passkey", in that order, each at most once. */
export type FactorKind = 'totp' | 'passkey';

export function factorKinds(f: Factors): FactorKind[] {
  const kinds: FactorKind[] = [];
  if (f.totp) kinds.push('totp');
  if (f.passkeys > 0) kinds.push('passkey');
  return kinds;
}

/** Whether the account has any second factor (and so owes one after a password or SSO). */
export function hasSecondFactor(f: Factors): boolean {
  return f.totp || f.passkeys > 0;
}

/** "TOTP, 2 passkeys", "1 passkey", "TOTP" or "None". */
export function describeFactors(f: Factors): string {
  const parts: string[] = [];
  if (f.totp) parts.push('TOTP');
  if (f.passkeys > 0) parts.push(f.passkeys === 1 ? '1 passkey' : `${f.passkeys} passkeys`);
  return parts.length === 0 ? 'None' : parts.join(', ');
}

/** The factors of each account, read in one query whatever the number of accounts. */
export async function factorsOf(
  db: Q,
  accounts: readonly { id: string; totp_enabled: number }[],
): Promise<Map<string, Factors>> {
  const counts = await countPasskeys(
    db,
    accounts.map((a) => a.id),
  );
  return new Map(accounts.map((a) => [a.id, { totp: a.totp_enabled === 1, passkeys: counts.get(a.id) ?? 0 }]));
}
