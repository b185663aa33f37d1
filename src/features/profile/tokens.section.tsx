// Profile section: personal API tokens. Mint (name, lifetime), list (created, expires, last used), revoke.
import { Field, Form, Select, Time } from '../../http/views/components.tsx';
import { DEFAULT_EXPIRY, EXPIRY_CHOICES, listTokens } from '../tokens/tokens.service.ts';
import type { ProfileSection } from './sections.ts';

export const tokensSection: ProfileSection = {
  key: 'tokens',
  render: async (deps, c) => {
    const tokens = await listTokens(deps, c.get('session')!.account.id);
    return (
      <section>
        <h2>API tokens</h2>
        <p class="hint">
          A token acts as you on the JSON API under /api/, with your current role. Send it as{' '}
          <code>Authorization: Bearer svc_pat_…</code>.
        </p>
        <Form action="/profile/tokens">
          <Field label="Token name" name="name" required maxlength={100} />
          <Select
            label="Expires after"
            name="expiry"
            value={DEFAULT_EXPIRY}
            options={Object.entries(EXPIRY_CHOICES).map(([value, choice]) => [value, choice.label])}
          />
          <button type="submit">Create token</button>
        </Form>
        {tokens.length === 0 ? (
          <p class="empty">You have no API tokens.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>Created</th>
                <th>Expires</th>
                <th>Last used</th>
                <th>
                  <span class="visually-hidden">Action</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((t) => (
                <tr>
                  <td>{t.name}</td>
                  <td>
                    <Time at={t.createdAt} />
                  </td>
                  <td>
                    {t.expiresAt === null ? 'never' : <Time at={t.expiresAt} />}
                    {t.expired ? (
                      <>
                        {' '}
                        <span class="badge">expired</span>
                      </>
                    ) : null}
                  </td>
                  <td>{t.lastUsedAt === null ? 'never' : <Time at={t.lastUsedAt} />}</td>
                  <td>
                    <Form action="/profile/tokens/revoke" class="inline">
                      <input type="hidden" name="token" value={t.id} />
                      <button type="submit" class="secondary" aria-label={`Revoke ${t.name}`}>
                        Revoke
                      </button>
                    </Form>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    );
  },
};
