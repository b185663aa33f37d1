// POST /profile/tokens (mint; shown once) and POST /profile/tokens/revoke. Session-only: /api/ never mints.
import { Hono } from 'hono';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import type { AppEnv } from '../../http/env.ts';
import { idField, parseForm } from '../../http/forms.ts';
import { renderProfile } from '../profile/profile.page.tsx';
import { DEFAULT_EXPIRY, EXPIRY_CHOICES, mintToken, revokeToken } from './tokens.service.ts';

const mintSchema = z.object({
  name: z
    .string({ error: 'Give the token a name.' })
    .transform((v) => v.trim())
    .refine((v) => v.length > 0, 'Give the token a name.')
    .refine((v) => [...v].length <= 100, 'Token names are at most 100 characters.')
    .refine((v) => !/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(v), 'Token names cannot contain control or invisible characters.'),
  expiry: z
    .string()
    .default(DEFAULT_EXPIRY)
    .refine((v) => Object.hasOwn(EXPIRY_CHOICES, v), 'Choose one of the offered lifetimes.'),
});
const revokeSchema = z.object({ token: idField('Choose a token to revoke.') });

export function tokensRoutes(deps: Deps) {
  const app = new Hono<AppEnv>();

  app.post('/profile/tokens', async (c) => {
    const session = c.get('session')!;
    const form = parseForm(c, mintSchema);
    if (!form.ok) {
      const message = form.errors.name ?? form.errors.expiry ?? 'Check the form and try again.';
      return renderProfile(deps, c, { section: 'tokens', kind: 'error', message }, 400);
    }
    const { token } = await mintToken(deps, session.account.id, form.data);
    return renderProfile(deps, c, {
      section: 'tokens',
      kind: 'success',
      message: (
        <>
          <p>Token “{form.data.name}” created. Copy it now: it is shown only this once.</p>
          <p>
            <code class="secret" id="new-token">
              {token}
            </code>
          </p>
        </>
      ),
    });
  });

  app.post('/profile/tokens/revoke', async (c) => {
    const form = parseForm(c, revokeSchema);
    if (!form.ok && form.control) return renderProfile(deps, c, { section: 'tokens', kind: 'error', message: form.errors.token ?? 'Check the form and try again.' }, 400);
    // Only the caller's own token matches; a foreign, stale or malformed id is a no-op (a malformed one is never looked up).
    if (form.ok) await revokeToken(deps, c.get('session')!.account.id, form.data.token);
    return c.redirect('/profile?notice=token-revoked', 303);
  });

  return app;
}
