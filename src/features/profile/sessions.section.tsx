// Profile section: one's own sessions (created, last seen, user agent, the single sign-on provider that opened it); end
// any of them, or sign out of this one.
// Stacked into one block per session on a phone, so the button is never off-screen in a sideways-scrolling box.
import { signedIn } from '../../http/env.ts';
import { Form, StackedTable, Time } from '../../http/views/components.tsx';
import { listOwnSessions } from '../auth/sessions.service.ts';
import { providerNames } from '../sso/sso.providers.service.ts';
import type { ProfileSection } from '../../http/views/profile.tsx';

export const sessionsSection: ProfileSection = {
  key: 'sessions',
  render: async (deps, c) => {
    const session = signedIn(c);
    const [sessions, providers] = await Promise.all([
      listOwnSessions(deps, session.account.id, session.idHash),
      providerNames(deps),
    ]);
    return (
      <section>
        <h2>Sessions</h2>
        <StackedTable class="sessions" columns={['Signed in', 'Last seen', 'Browser', 'Action']}>
          {sessions.map((s) => (
            <tr>
              <td>
                <span class="cell-label">Signed in: </span>
                <Time at={s.createdAt} />
                {s.current ? (
                  <>
                    {' '}
                    <span class="badge">this session</span>
                  </>
                ) : null}
                {s.stage !== 'full' ? (
                  <>
                    {' '}
                    <span class="badge">second factor pending</span>
                  </>
                ) : null}
                {s.providerId !== null ? (
                  <>
                    {' '}
                    <span class="badge">via {providers.get(s.providerId) ?? 'single sign-on'}</span>
                  </>
                ) : null}
              </td>
              <td>
                <span class="cell-label">Last seen: </span>
                <Time at={s.lastSeenAt} />
              </td>
              <td class="user-agent">
                <span class="cell-label">Browser: </span>
                {s.userAgent || '—'}
              </td>
              <td>
                <Form action="/profile/sessions/end" class="inline">
                  <input type="hidden" name="session" value={s.publicId} />
                  <button type="submit" class="secondary">
                    {s.current ? 'End this session' : 'End session'}
                  </button>
                </Form>
              </td>
            </tr>
          ))}
        </StackedTable>
      </section>
    );
  },
};
