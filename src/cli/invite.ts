// svc invite: mints an invitation from the host shell (the break-glass path when no administrator can sign in) and
// prints its join link. The rules are the invitations service's; this door only reads flags.
import { parseArgs } from 'node:util';
import { CLI_ACTOR } from '../features/auth/admin-actor.ts';
import { checkInvitationNote, mintInvitation } from '../features/team/invitations.service.ts';
import { linkBase } from '../link-base.ts';
import { startRuntime } from './start.ts';

export const INVITE_HELP = `Usage: svc invite --role admin|viewer [--note <text>]

Mints a single-use invitation valid for 7 days and prints its join link on stdout, like the Team page does. Works
with no administrator able to sign in: whoever accepts an admin invitation becomes an administrator. The invitation
appears in Settings > Team with "command line" as its author.

  --role admin|viewer   the role the new account gets (required)
  --note <text>         a label for the admin list, at most 200 characters (optional)

The link starts with SVC_EXTERNAL_URL, or http://<HOST>:<PORT> when that is unset (localhost when HOST is every address).
Exit codes: 0 minted, 1 failed, 2 usage error (nothing minted).
`;

/** Runs `svc invite`; returns the exit code. */
export async function runInvite(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { role: { type: 'string' }, note: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(INVITE_HELP);
    return 0;
  }
  const problems: string[] = [];
  if (values.role !== 'admin' && values.role !== 'viewer')
    problems.push(
      values.role === undefined ? '--role is required: admin or viewer.' : '--role: choose admin or viewer.',
    );
  const note = checkInvitationNote(values.note);
  if (!note.ok) problems.push(`--note: ${note.message}`);
  if (problems.length > 0 || !note.ok) {
    process.stderr.write(
      `svc invite: nothing minted:\n${problems.map((p) => `  - ${p}`).join('\n')}\n\n${INVITE_HELP}`,
    );
    return 2;
  }
  // Logs (including the join-link line every mint writes) go to stderr, so stdout carries only the link.
  const deps = await startRuntime({ logToStderr: true });
  try {
    const base = linkBase(deps.config);
    const minted = await mintInvitation(deps, {
      ...CLI_ACTOR,
      role: values.role as 'admin' | 'viewer',
      note: note.note ?? undefined,
      base,
    });
    // Never refused: the host command line needs no "Confirm it's you" (shell access is the trust boundary).
    if (!minted.ok) throw new Error(`svc invite: refused (${minted.reason})`);
    process.stdout.write(`${minted.joinLink}\n`);
    process.stderr.write(
      `svc invite: ${minted.role} invitation minted; the link works once, until ${new Date(minted.expiresAt).toISOString()}\n`,
    );
    return 0;
  } finally {
    await deps.db.destroy();
  }
}
