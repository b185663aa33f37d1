// Profile section: passkeys. The list (name, added, last used, synced or not), "Add a passkey" (a page of its own,
// the only Profile page that runs script), and the steps to rename one or remove one (`?rename-passkey=<id>`,
// `?remove-passkey=<id>`: a second state of this page with its own form, no script). Adding and removing need
// "Confirm it's you" within the last 10 minutes of this session; renaming does not.
import { signedIn } from '../../http/env.ts';
import { StackedTable, Time } from '../../http/views/components.tsx';
import { ConfirmFirstHint, type ProfileSection } from '../../http/views/profile.tsx';
import { recentlyConfirmed } from '../second-factor/reauth.service.ts';
import { ownPasskeys } from '../second-factor/passkeys.service.ts';
import { passkeyTitle, RemovePasskeyStep, RenamePasskeyStep } from '../second-factor/passkeys.views.tsx';
import { secondFactorState } from '../second-factor/second-factor.service.ts';

export const passkeysSection: ProfileSection = {
  key: 'passkeys',
  render: async (deps, c) => {
    const session = signedIn(c);
    const [passkeys, state, confirmed] = await Promise.all([
      ownPasskeys(deps, session.account.id),
      secondFactorState(deps, session.account.id),
      recentlyConfirmed(deps, session.idHash),
    ]);
    // Only one of the holder's own passkeys has a step; a stale or foreign id shows none.
    const renaming = passkeys.find((p) => p.id === c.req.query('rename-passkey'));
    const removing = confirmed ? passkeys.find((p) => p.id === c.req.query('remove-passkey')) : undefined;
    const lastFactor = !state.factors.totp && passkeys.length === 1;
    return (
      <section>
        <h2>Passkeys</h2>
        <p>
          A passkey signs you in on its own, with no password, from the sign-in page; after a password it serves as your
          second factor. Sites other than this one cannot use it, so a look-alike page gets nothing.
        </p>
        {renaming ? <RenamePasskeyStep passkey={renaming} /> : null}
        {removing ? <RemovePasskeyStep passkey={removing} lastFactor={lastFactor} /> : null}
        {confirmed ? (
          <p>
            <a class="button" href="/profile/passkeys/add">
              Add a passkey
            </a>
          </p>
        ) : (
          <ConfirmFirstHint act="add or remove a passkey" />
        )}
        {passkeys.length === 0 ? (
          <p class="empty">You have no passkeys.</p>
        ) : (
          <StackedTable class="passkeys" columns={['Name', 'Added', 'Last used', 'Kind', 'Actions']}>
            {passkeys.map((p) => (
              <tr>
                <td>{p.name}</td>
                <td>
                  <span class="cell-label">Added: </span>
                  <Time at={p.createdAt} />
                </td>
                <td>
                  <span class="cell-label">Last used: </span>
                  {p.lastUsedAt === null ? 'never' : <Time at={p.lastUsedAt} />}
                </td>
                <td>
                  <span class="cell-label">Kind: </span>
                  {p.synced ? <span class="badge">Synced</span> : 'This device or key only'}
                </td>
                <td>
                  <div class="actions">
                    <a
                      class="button secondary"
                      href={`/profile?rename-passkey=${encodeURIComponent(p.id)}#passkey-rename`}
                      aria-label={`Rename… ${passkeyTitle(p)}`}
                    >
                      Rename…
                    </a>
                    {confirmed ? (
                      <a
                        class="button secondary"
                        href={`/profile?remove-passkey=${encodeURIComponent(p.id)}#passkey-remove`}
                        aria-label={`Remove… ${passkeyTitle(p)}`}
                      >
                        Remove…
                      </a>
                    ) : null}
                  </div>
                </td>
              </tr>
            ))}
          </StackedTable>
        )}
      </section>
    );
  },
};
