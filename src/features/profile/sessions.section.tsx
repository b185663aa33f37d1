// Profile section: one's own sessions (created, last seen, user agent); end any of them, or sign out of this one.
import { Form, Time } from '../../http/views/components.tsx';
import { listOwnSessions } from '../auth/sessions.service.ts';
import type { ProfileSection } from './sections.ts';

export const sessionsSection: ProfileSection = {
  key: 'sessions',
  render: async (deps, c) => {
    const session = c.get('session')!;
    const sessions = await listOwnSessions(deps, session.account.id, session.idHash);
    return (
      <section>
        <h2>Sessions</h2>
        <table>
          <thead>
            <tr>
              <th>Signed in</th>
              <th>Last seen</th>
              <th>Browser</th>
              <th>
                <span class="visually-hidden">Action</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {sessions.map((s) => (
              <tr>
                <td>
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
                </td>
                <td>
                  <Time at={s.lastSeenAt} />
                </td>
                <td class="user-agent">{s.userAgent || '—'}</td>
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
          </tbody>
        </table>
      </section>
    );
  },
};
