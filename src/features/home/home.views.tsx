// The home page body: who is signed in, and where to go next.
import type { Account } from '../auth/accounts.repo.ts';

type HomeAccount = Pick<Account, 'username' | 'role'>;

/** Who is signed in, and links to the inbox, the profile and (for admins) the settings. */
export function HomeBody(props: { account: HomeAccount }) {
  const { account } = props;
  return (
    <section>
      <p class="lead">
        Signed in as <strong>{account.username}</strong> with the role <strong>{account.role}</strong>.
      </p>
      <ul class="links">
        <li>
          <a href="/inbox">Read your messages</a>
        </li>
        <li>
          <a href="/profile">Manage your password, second factor and API tokens</a>
        </li>
        {account.role === 'admin' ? (
          <li>
            <a href="/settings">Administer the team, single sign-on and channels</a>
          </li>
        ) : null}
      </ul>
    </section>
  );
}
