// POST /profile/tokens (mint; POST/redirect/GET, the token shown once on the page after) and POST
// /profile/tokens/revoke. Session-only: /api/ never mints.
import { Hono } from 'hono';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { signedIn, type AppEnv } from '../../http/env.ts';
import { idField, parseForm } from '../../http/forms.ts';
import { revealLater, spendOnce } from '../auth/reveal.tsx';
import type { RenderProfile } from '../../http/views/profile.tsx';
import { TOKEN_REVEAL, TOKEN_REVEAL_PATH } from './tokens.section.tsx';
import { DEFAULT_EXPIRY, EXPIRY_CHOICES, mintToken, revokeToken } from './tokens.service.ts';
import { hasInvisibleCharacters } from '../text-rules.ts';

const mintSchema = z.object({
  name: z
    .string({ error: 'Give the token a name.' })
    .transform((v) => v.trim())
    .refine((v) => v.length > 0, 'Give the token a name.')
    .refine((v) => [...v].length <= 100, 'Token names are at most 100 characters.')
    .refine((v) => !hasInvisibleCharacters(v), 'Token names cannot contain control or invisible characters.'),
  expiry: z
    .string()
    .default(DEFAULT_EXPIRY)
    .refine((v) => Object.hasOwn(EXPIRY_CHOICES, v), 'Choose one of the offered lifetimes.'),
  /** An unticked checkbox is absent from the form. */
  read_only: z
    .string()
    .optional()
    .transform((v) => v !== undefined),
});
const revokeSchema = z.object({ token: idField('Choose a token to revoke.') });

export function tokensRoutes(deps: Deps, renderProfile: RenderProfile) {
  const app = new Hono<AppEnv>();

  // A second post of the same form (its one-time token spent) mints nothing and lands on the same page; a form that
  // does not validate mints nothing either, so it is answered before the token is spent. A name the account already
  // uses (the service's rule) is refused at its field, on a page whose form carries a fresh one-time token.
  app.post('/profile/tokens', async (c) => {
    const session = signedIn(c);
    const form = parseForm(c, mintSchema);
    if (!form.ok) {
      const refused = { id: 'token-mint', errors: form.errors, values: form.values };
      return renderProfile(deps, c, { section: 'tokens', kind: 'error', message: '', form: refused }, 400);
    }
    if (!(await spendOnce(c))) return c.redirect(TOKEN_REVEAL_PATH, 303);
    const { name, expiry, read_only: readOnly } = form.data;
    const minted = await mintToken(deps, {
      accountId: session.account.id,
      sessionIdHash: session.idHash,
      name,
      expiry,
      readOnly,
    });
    if (!minted.ok) {
      if (minted.reason === 'reauth-required')
        return c.redirect('/profile?notice=confirm-first-tokens#profile-tokens', 303);
      // 'name-taken': at the name field, the form as it was sent.
      const errors = {
        name: `You already have a token named “${name}”. Choose another name, or revoke that token first.`,
      };
      const refused = { id: 'token-mint', errors, values: { name, expiry, ...(readOnly ? { read_only: 'on' } : {}) } };
      return renderProfile(deps, c, { section: 'tokens', kind: 'error', message: '', form: refused }, 409);
    }
    await revealLater(c, TOKEN_REVEAL, JSON.stringify({ name, token: minted.token, readOnly }));
    return c.redirect(TOKEN_REVEAL_PATH, 303);
  });

  app.post('/profile/tokens/revoke', async (c) => {
    const form = parseForm(c, revokeSchema);
    if (!form.ok && form.control)
      return renderProfile(
        deps,
        c,
        { section: 'tokens', kind: 'error', message: form.errors.token ?? 'Check the form and try again.' },
        400,
      );
    // Only the caller's own token matches; a foreign, stale or malformed id is a no-op (a malformed one is never looked
    // up).
    if (form.ok) await revokeToken(deps, signedIn(c).account.id, form.data.token);
    return c.redirect('/profile?notice=token-revoked', 303);
  });

  return app;
}
