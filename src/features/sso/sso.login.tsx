// The single sign-on part of the sign-in page: one button per enabled provider under the password form (app.ts hands
// it to the sign-in routes, which sit below this feature).
import type { Child } from 'hono/jsx';
import type { Deps } from '../../deps.ts';
import { enabledProviders } from './sso.providers.service.ts';
import { SsoButtons } from './sso.views.tsx';

/** The enabled providers' sign-in buttons (nothing when none is enabled). */
export async function ssoSignInButtons(deps: Deps): Promise<Child> {
  return <SsoButtons providers={await enabledProviders(deps)} />;
}
