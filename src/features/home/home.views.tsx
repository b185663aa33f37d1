// The home page body: who is signed in, and where to go next.
import type { Account } from '../auth/accounts.repo.ts';
import { compileTemplate, escapeHtml, fillTemplate, slot, type Template } from '../../http/views/template.ts';

type HomeAccount = Pick<Account, 'username' | 'role'>;

/** The markup's one source; every request uses its precompiled form, renderHomeBody. */
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

// The page every signed-in visit starts on: precompiled once per role (see template.ts).
const shapes = new Map<HomeAccount['role'], Template<'username'>>();

/** What <HomeBody> renders for `account`, from the precompiled shape of its role. */
export function renderHomeBody(account: HomeAccount): string {
  let shape = shapes.get(account.role);
  if (!shape) {
    shape = compileTemplate((<HomeBody account={{ username: slot('username'), role: account.role }} />).toString() as string, ['username']);
    shapes.set(account.role, shape);
  }
  return fillTemplate(shape, { username: escapeHtml(account.username) });
}
