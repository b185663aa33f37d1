// svc accounts: the team's accounts from the host shell (the break-glass path when no administrator can sign in). The
// rules are the team service's, with the host as actor (an administrator with no self-rules; the last-active-admin
// guard holds); this door reads arguments, finds accounts by username and says each refusal in its catalogue's words.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Deps } from '../deps.ts';
import { findAccountByUsername } from '../features/auth/accounts.repo.ts';
import { CLI_ACTOR } from '../features/auth/admin-actor.ts';
import { wordsOf, type Refusal } from '../features/refusals.ts';
import { describeFactors, factorKinds, hasSecondFactor } from '../features/second-factor/factors.ts';
import type { TeamAccount } from '../features/team/team.repo.ts';
import {
  REACTIVATE_REFUSALS,
  REENROL_REFUSALS,
  RESET_LINK_REFUSALS,
  REVOKE_TOKENS_REFUSALS,
  ROLE_REFUSALS,
  SUSPEND_REFUSALS,
  type TeamFacts,
} from '../features/team/team.refusals.ts';
import {
  changeRole,
  loadTeam,
  mintResetLink,
  reactivateAccount,
  reenrolSecondFactor,
  revokeAllTokens,
  suspendAccount,
} from '../features/team/team.service.ts';
import { linkBase } from '../link-base.ts';
import { startRuntime } from './start.ts';

const EXIT_CODES =
  'Exit codes: 0 done (or already so: nothing to change), 1 refused or failed (nothing changed),\n2 usage error.';

/** One subcommand: its usage line, what it does, its flags, and how it runs once its arguments are valid. */
interface Subcommand {
  usage: string;
  /** Its line in `svc accounts --help`. */
  summary: string;
  about: string;
  options?: ParseArgsConfig['options'];
  /** Checks the positional arguments; returns the problem, or undefined when they are valid. */
  check(positionals: string[]): string | undefined;
  run(deps: Deps, positionals: string[], flags: Record<string, unknown>, say: Say): Promise<number>;
}

/** A subcommand acting on one account, named by its username. */
type AccountAct = (
  deps: Deps,
  account: { id: string; username: string },
  say: Say,
  positionals: string[],
) => Promise<number>;

/** Where a subcommand's answers go: `done` to stdout, `refuse` one line to stderr (exit 1). */
interface Say {
  done(line: string): number;
  refuse(line: string): number;
}

/** A valid role, or undefined. */
const roleOf = (value: string | undefined) => (value === 'admin' || value === 'viewer' ? value : undefined);

/** Checks the arguments: none (`count` 0) or one username, then a role when `withRole`. */
const expects =
  (count: 0 | 1, withRole = false) =>
  (positionals: string[]): string | undefined => {
    const wanted = count + (withRole ? 1 : 0);
    if (positionals.length > wanted) return `unexpected argument ${JSON.stringify(positionals[wanted])}.`;
    if (count === 0) return undefined;
    if (positionals.length === 0 || positionals[0]!.trim() === '') return 'name the account (its username).';
    if (withRole && positionals.length < 2) return 'name the role: admin or viewer.';
    if (withRole && !roleOf(positionals[1]))
      return `the role must be admin or viewer, not ${JSON.stringify(positionals[1])}.`;
    return undefined;
  };

/** How, from the host shell, to have another active administrator (after a last-admin refusal). */
const PROMOTE_HOW = 'svc accounts set-role <username> admin promotes one; svc invite --role admin invites one.';

/** Runs `act` on the account the first argument names (case-insensitively); an unknown name is refused. */
function onAccount(act: AccountAct): Subcommand['run'] {
  return async (deps, positionals, _flags, say) => {
    const name = positionals[0]!.trim();
    const account = await findAccountByUsername(deps.db, name);
    if (!account) return say.refuse(`no account is named ${JSON.stringify(name)} (svc accounts list shows them).`);
    return act(deps, account, say, positionals);
  };
}

/** Answers of the subcommand `name`. */
const sayFor = (name: string): Say => ({
  done(line) {
    process.stdout.write(`${line}\n`);
    return 0;
  },
  refuse(line) {
    process.stderr.write(`svc accounts ${name}: ${line}\n`);
    return 1;
  },
});

/**
 * Words a refusal of the team service in the act's catalogue's words (the page and the API say the same), naming the
 * account; with the host as actor that is the last active admin, or an account removed meanwhile.
 */
function refusal<R extends string>(
  say: Say,
  username: string,
  catalogue: Record<R, Refusal<TeamFacts>>,
  reason: R,
): number {
  const words = wordsOf<TeamFacts>(catalogue[reason], { username, via: 'cli' });
  return say.refuse(`${username}: ${words} Nothing changed.${reason === 'last-admin' ? ` (${PROMOTE_HOW})` : ''}`);
}

/** Words an act that may find the account already so: refused, unchanged, or changed (and logged, actor "cli"). */
function outcome<R extends string>(
  deps: Deps,
  say: Say,
  account: { id: string; username: string },
  result: { ok: true; username: string; changed: boolean } | { ok: false; reason: R },
  refusals: Record<R, Refusal<TeamFacts>>,
  words: { event: string; already: string; done: string },
): number {
  if (!result.ok) return refusal(say, account.username, refusals, result.reason);
  if (!result.changed) return say.done(`${result.username} ${words.already}; nothing changed.`);
  deps.log.info(
    { event: words.event, account: account.id, actor: 'cli' },
    `${words.event.replace('-', ' ')} from the command line`,
  );
  return say.done(`${result.username} ${words.done}`);
}

/** A time for people: UTC to the minute, or "never". */
const when = (at: number | null) =>
  at === null ? 'never' : `${new Date(at).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** An account as `svc accounts list` shows it (no hash, no secret). */
function listed(a: TeamAccount) {
  return {
    username: a.username,
    role: a.role,
    state: a.suspended_at === null ? 'active' : 'suspended',
    secondFactor: hasSecondFactor(a.factors) ? 'enrolled' : 'none',
    secondFactors: factorKinds(a.factors),
    lastSignIn: a.last_sign_in_at === null ? null : new Date(a.last_sign_in_at).toISOString(),
  };
}

/** The accounts as an aligned table (widths in code points, so accented names stay aligned). */
function table(accounts: TeamAccount[]): string {
  const rows = [
    ['USERNAME', 'ROLE', 'STATE', 'SECOND FACTOR', 'LAST SIGN-IN'],
    ...accounts.map((a) => {
      const l = listed(a);
      return [l.username, l.role, l.state, describeFactors(a.factors), when(a.last_sign_in_at)];
    }),
  ];
  const len = (s: string) => [...s].length;
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => len(r[i]!))));
  return rows
    .map(
      (r) =>
        `${r.map((cell, i) => (i === r.length - 1 ? cell : cell + ' '.repeat(widths[i]! - len(cell) + 2))).join('')}\n`,
    )
    .join('');
}

const SUBCOMMANDS: Record<string, Subcommand> = {
  list: {
    usage: 'svc accounts list [--json]',
    summary: 'every account: role, state, second factors, last sign-in',
    about:
      'Lists every account by username: role, state (active or suspended), second factors ("TOTP, 2 passkeys",\n' +
      '"1 passkey", "TOTP" or "None") and last sign-in (UTC, or "never"). No password hash, key or other secret is\n' +
      'ever printed.\n\n' +
      '  --json   an array of objects instead: {"username", "role", "state", "secondFactor", "secondFactors",\n' +
      '           "lastSignIn"} (secondFactor "enrolled" or "none"; secondFactors the kinds it has, ["totp",\n' +
      '           "passkey"] or fewer; lastSignIn an ISO 8601 UTC time or null)',
    options: { json: { type: 'boolean', default: false } },
    check: expects(0),
    async run(deps, _positionals, flags) {
      const { accounts } = await loadTeam(deps);
      if (flags.json) process.stdout.write(`${JSON.stringify(accounts.map(listed), null, 2)}\n`);
      else if (accounts.length === 0)
        process.stdout.write(
          'No accounts yet. Open the setup link svc serve prints, or run svc invite --role admin.\n',
        );
      else process.stdout.write(table(accounts));
      return 0;
    },
  },
  'reset-password': {
    usage: 'svc accounts reset-password <username>',
    summary: 'print a single-use password reset link (24 h)',
    about:
      'Mints a single-use password reset link for the account, valid for 24 hours, and prints it on stdout (its expiry\n' +
      'on stderr). Whoever opens it chooses a new password; every session of the account then ends and every API token\n' +
      'of it is revoked, and its second factor stays. Any earlier link of that account stops working. The link is shown this once and never logged.\n' +
      'It starts with SVC_EXTERNAL_URL, or http://<HOST>:<PORT> when that is unset (localhost when HOST is every address).',
    check: expects(1),
    run: onAccount(async (deps, account, say) => {
      const base = linkBase(deps.config);
      const minted = await mintResetLink(deps, { ...CLI_ACTOR, accountId: account.id, base });
      if (!minted.ok) return refusal(say, account.username, RESET_LINK_REFUSALS, minted.reason);
      process.stdout.write(`${minted.url}\n`);
      process.stderr.write(
        `svc accounts reset-password: reset link for ${minted.username} created; it works once, until ${new Date(minted.expiresAt).toISOString()}. ` +
          'Any earlier link for this account no longer works.\n',
      );
      if (minted.suspended) {
        process.stderr.write(
          `svc accounts reset-password: ${minted.username} is suspended: the link works only once it is reactivated (svc accounts reactivate ${minted.username}).\n`,
        );
      }
      return 0;
    }),
  },
  'reset-second-factor': {
    usage: 'svc accounts reset-second-factor <username>',
    summary: 'remove TOTP and every passkey; it enrols again at next sign-in',
    about:
      'Clears every second factor of the account (its TOTP and every passkey) and voids its recovery codes; it enrols\n' +
      'again at its next sign-in. Its password and sessions are unchanged (pair with reset-password when both are lost).',
    check: expects(1),
    run: onAccount(async (deps, account, say) => {
      const result = await reenrolSecondFactor(deps, { ...CLI_ACTOR, targetId: account.id });
      if (!result.ok) return refusal(say, account.username, REENROL_REFUSALS, result.reason);
      deps.log.info(
        { event: 'second-factor-reset', account: account.id, actor: 'cli', cleared: result.cleared },
        'second factor reset from the command line',
      );
      const cleared = hasSecondFactor(result.cleared)
        ? `'s second factor is cleared (${describeFactors(result.cleared)} removed) and its recovery codes are void`
        : ' had no second factor enrolled';
      return say.done(
        `${result.username}${cleared}. It enrols at its next sign-in; its password and sessions are unchanged.`,
      );
    }),
  },
  'revoke-tokens': {
    usage: 'svc accounts revoke-tokens <username>',
    summary: 'revoke every API token of the account',
    about:
      'Revokes every personal API token of the account: each answers 401 from its next request on, on every instance,\n' +
      'and reactivating the account does not bring them back. Its sessions and password are unchanged. Use it after a\n' +
      'leak, or before reactivating an account whose tokens must not work again. The tokens are never printed.',
    check: expects(1),
    run: onAccount(async (deps, account, say) => {
      const result = await revokeAllTokens(deps, { ...CLI_ACTOR, accountId: account.id });
      if (!result.ok) return refusal(say, account.username, REVOKE_TOKENS_REFUSALS, result.reason);
      if (result.revoked === 0) return say.done(`${result.username} has no API tokens; nothing changed.`);
      return say.done(
        `${result.username}: ${result.revoked === 1 ? '1 API token' : `${result.revoked} API tokens`} revoked; each answers 401 from now on.`,
      );
    }),
  },
  'set-role': {
    usage: 'svc accounts set-role <username> admin|viewer',
    summary: 'make the account an admin or a viewer',
    about:
      "Gives the account the role admin or viewer; it applies from that account's next request. Demoting the last\n" +
      'active administrator is refused.',
    check: expects(1, true),
    run: onAccount(async (deps, account, say, positionals) => {
      const role = roleOf(positionals[1])!;
      return outcome(
        deps,
        say,
        account,
        await changeRole(deps, { ...CLI_ACTOR, targetId: account.id, role }),
        ROLE_REFUSALS,
        {
          event: 'role-changed',
          already: `already has the role ${role}`,
          done: `is now ${role === 'admin' ? 'an admin' : 'a viewer'}. It applies from that account's next request.`,
        },
      );
    }),
  },
  suspend: {
    usage: 'svc accounts suspend <username>',
    summary: 'end its sessions; no sign-in or API tokens until reactivated',
    about:
      'Suspends the account: its sessions end, it cannot sign in, and its API tokens do not work until it is\n' +
      'reactivated (they are kept). Suspending the last active administrator is refused.',
    check: expects(1),
    run: onAccount(async (deps, account, say) =>
      outcome(
        deps,
        say,
        account,
        await suspendAccount(deps, { ...CLI_ACTOR, accountId: account.id }),
        SUSPEND_REFUSALS,
        {
          event: 'account-suspended',
          already: 'was already suspended',
          done: 'is suspended: its sessions ended; it cannot sign in, and its API tokens do not work until it is reactivated.',
        },
      ),
    ),
  },
  reactivate: {
    usage: 'svc accounts reactivate <username>',
    summary: 'lift a suspension',
    about:
      'Lifts a suspension: the account can sign in again, and its API tokens work again unless they were revoked or expired.',
    check: expects(1),
    run: onAccount(async (deps, account, say) =>
      outcome(
        deps,
        say,
        account,
        await reactivateAccount(deps, { ...CLI_ACTOR, accountId: account.id }),
        REACTIVATE_REFUSALS,
        {
          event: 'account-reactivated',
          already: 'is already active',
          done: 'is reactivated: it can sign in again, and its API tokens work again unless they were revoked or expired.',
        },
      ),
    ),
  },
};

/** One subcommand's --help. */
const helpOf = (sub: Subcommand) =>
  `Usage: ${sub.usage}\n\n${sub.about}\n\n${sub.usage.includes('<username>') ? 'The username matches ignoring case.\n' : ''}${EXIT_CODES}\n`;

export const ACCOUNTS_HELP = `Usage: svc accounts <subcommand> [arguments]

Administers the team's accounts from the host shell, with the same guards as Settings > Team (never zero active
administrators). Works when no administrator can sign in; acts are logged with "cli" as their actor.

${Object.values(SUBCOMMANDS)
  .map((s) => `  ${s.usage.slice('svc accounts '.length).padEnd(34)}${s.summary}\n`)
  .join('')}
svc accounts <subcommand> --help describes one. Usernames match ignoring case.
${EXIT_CODES}
`;

/** A usage error: the problem and the usage on stderr, exit 2. */
function usageError(prefix: string, problem: string, help: string): number {
  process.stderr.write(`${prefix}: ${problem}\n\n${help}`);
  return 2;
}

/** Runs `svc accounts`; returns the exit code. */
export async function runAccounts(args: string[]): Promise<number> {
  const [name, ...rest] = args;
  if (name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(ACCOUNTS_HELP);
    return 0;
  }
  if (name === undefined) return usageError('svc accounts', 'name a subcommand.', ACCOUNTS_HELP);
  const sub = Object.hasOwn(SUBCOMMANDS, name) ? SUBCOMMANDS[name]! : undefined;
  if (!sub) return usageError('svc accounts', `unknown subcommand ${JSON.stringify(name)}.`, ACCOUNTS_HELP);
  const prefix = `svc accounts ${name}`;
  // biome-ignore lint/suspicious/noImplicitAnyLet: parseArgs's result type follows the subcommand's options
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...sub.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    if (err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS'))
      return usageError(prefix, err.message, helpOf(sub));
    throw err;
  }
  if (parsed.values.help) {
    process.stdout.write(helpOf(sub));
    return 0;
  }
  const problem = sub.check(parsed.positionals);
  if (problem) return usageError(prefix, problem, helpOf(sub));
  // Logs go to stderr, so stdout carries only the answer (the table, the JSON, the link).
  const deps = await startRuntime({ logToStderr: true });
  try {
    return await sub.run(deps, parsed.positionals, parsed.values, sayFor(name));
  } finally {
    await deps.db.destroy();
  }
}
