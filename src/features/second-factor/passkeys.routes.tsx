// Passkeys at the second-factor step (POST /login/totp/passkey/options, then POST /login/totp/passkey) and on Profile:
// GET/POST /profile/passkeys/add (the page that runs the registration ceremony; options from POST
// /profile/passkeys/options), POST /profile/passkeys/rename and /remove (the steps are shown in Profile's section).
// Sign-in with a passkey alone is the sign-in page's (auth/login.routes.tsx).
import { Hono } from 'hono';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { clearSessionCookie } from '../../http/cookies.ts';
import { signedIn, type AppEnv, type Ctx } from '../../http/env.ts';
import { idField, parseForm } from '../../http/forms.ts';
import { render } from '../../http/render.tsx';
import { clientAddress, externalOrigin } from '../../http/request.ts';
import type { RenderProfile } from '../../http/views/profile.tsx';
import { recentlyConfirmed } from '../auth/reauth-window.ts';
import { revealLater } from '../auth/reveal.tsx';
import { lockedMessage } from '../auth/login.views.tsx';
import { hasInvisibleCharacters } from '../text-rules.ts';
import { PASSKEY_CONFIRM_FIRST, PASSKEY_REFUSALS } from './passkeys.refusals.ts';
import { secondFactorOptions, verifyPasskeyStep } from './passkey-sign-in.service.ts';
import { PASSKEY_NAME_MAX, relyingPartyOf } from './passkeys.ceremony.ts';
import { registerPasskey, registrationOptions, removeOwnPasskey, renameOwnPasskey } from './passkeys.service.ts';
import { AddPasskeyPage } from './passkeys.views.tsx';
import { RECOVERY_CODES_REVEAL, recoveryCodesPath } from './second-factor.reveals.ts';
import { promote, sessionIn, startOver, stepPage } from './step-session.tsx';

const NAME_RULE = `Name it in 1 to ${PASSKEY_NAME_MAX} characters, without control or invisible characters.`;
const nameField = z
  .string()
  .default('')
  .transform((v) => v.trim())
  .refine((v) => [...v].length <= PASSKEY_NAME_MAX && !hasInvisibleCharacters(v), NAME_RULE);
const answerField = z.string().max(4096).default('');
const stepSchema = z.object({ answer: answerField });
const addSchema = z.object({ answer: answerField, name: nameField });
const renameSchema = z.object({
  id: idField('The form did not say which passkey to rename.'),
  name: nameField.refine((v) => v.length > 0, NAME_RULE),
});
const removeSchema = z.object({
  id: idField('The form did not say which passkey to remove.'),
  confirm: z.literal('yes').optional(),
});
const ADD_TITLE = 'Add a passkey';

/** The relying party of this request: the host of SVC_EXTERNAL_URL, else the request's own host. */
const rpOf = (c: Ctx, deps: Deps) => relyingPartyOf(externalOrigin(c, deps.config));

/**
 * A ceremony script's request for options refused by the state of the session (not at that step, no confirmation):
 * the words it shows beside the button. 409, as the gate's own refusals are 403.
 */
const noOptions = (c: Ctx, words: string) => c.json({ error: words }, 409);

export function passkeyRoutes(deps: Deps, renderProfile: RenderProfile) {
  const app = new Hono<AppEnv>();

  // ---- The second-factor step ----

  app.post('/login/totp/passkey/options', async (c) => {
    const session = sessionIn(c, 'totp');
    if (session instanceof Response) return noOptions(c, PASSKEY_REFUSALS['session-ended'].words);
    const input = { accountId: session.account.id, sessionIdHash: session.idHash, rp: rpOf(c, deps) };
    const result = await secondFactorOptions(deps, input);
    if (!result.ok) return noOptions(c, PASSKEY_REFUSALS[result.reason].words);
    return c.json({ options: result.options });
  });

  app.post('/login/totp/passkey', async (c) => {
    const session = sessionIn(c, 'totp');
    if (session instanceof Response) return session;
    const form = parseForm(c, stepSchema);
    const result = await verifyPasskeyStep(deps, {
      accountId: session.account.id,
      sessionIdHash: session.idHash,
      rp: rpOf(c, deps),
      answer: form.ok ? form.data.answer : '',
      address: clientAddress(c),
    });
    if (result.ok) {
      if (!(await promote(deps, c, session))) return startOver(deps, c, session);
      return c.redirect('/', 303);
    }
    if (result.reason === 'not-enrolled') return startOver(deps, c, session);
    if (result.reason === 'session-ended') {
      // Too many failed answers in this session: the password is owed again.
      clearSessionCookie(c, deps.config);
      return c.redirect('/login?notice=code-attempts', 303);
    }
    if (result.reason === 'locked') return stepPage(deps, c, session, lockedMessage(result.retryAfterMs), 429);
    const refusal = PASSKEY_REFUSALS[result.reason];
    return stepPage(deps, c, session, refusal.words, refusal.status);
  });

  // ---- Profile ----

  // Behind "Confirm it's you": without a recent confirmation, back to Profile, which asks for it.
  app.get('/profile/passkeys/add', async (c) => {
    if (!(await recentlyConfirmed(deps, signedIn(c).idHash)))
      return c.redirect('/profile?notice=confirm-first-passkeys#profile-passkeys', 303);
    return render(c, ADD_TITLE, <AddPasskeyPage />, 200, { ceremony: true });
  });

  app.post('/profile/passkeys/options', async (c) => {
    const session = signedIn(c);
    const input = { accountId: session.account.id, sessionIdHash: session.idHash, rp: rpOf(c, deps) };
    const result = await registrationOptions(deps, input);
    if (result.ok) return c.json({ options: result.options });
    const words =
      result.reason === 'reauth-required' ? PASSKEY_CONFIRM_FIRST.words : PASSKEY_REFUSALS[result.reason].words;
    return noOptions(c, words);
  });

  app.post('/profile/passkeys/add', async (c) => {
    const session = signedIn(c);
    const form = parseForm(c, addSchema);
    const refuse = (error: string, status: 400 | 401 | 403 | 409, name?: string) =>
      render(c, ADD_TITLE, <AddPasskeyPage error={error} name={name} />, status, { ceremony: true });
    if (!form.ok) return refuse(Object.values(form.errors)[0] ?? NAME_RULE, 400, form.values.name);
    const result = await registerPasskey(deps, {
      accountId: session.account.id,
      sessionIdHash: session.idHash,
      rp: rpOf(c, deps),
      answer: form.data.answer,
      name: form.data.name,
    });
    if (result.ok) {
      if (!result.recoveryCodes) return c.redirect('/profile?notice=passkey-added#profile-passkeys', 303);
      // The account's first second factor: its recovery codes, shown once on the page after the redirect.
      await revealLater(c, RECOVERY_CODES_REVEAL, JSON.stringify(result.recoveryCodes));
      return c.redirect(recoveryCodesPath('passkey'), 303);
    }
    if (result.reason === 'reauth-required')
      return c.redirect('/profile?notice=confirm-first-passkeys#profile-passkeys', 303);
    const refusal = PASSKEY_REFUSALS[result.reason];
    return refuse(refusal.words, refusal.status, form.data.name);
  });

  app.post('/profile/passkeys/rename', async (c) => {
    const session = signedIn(c);
    const form = parseForm(c, renameSchema);
    if (!form.ok) {
      const message = Object.values(form.errors)[0] ?? NAME_RULE;
      return renderProfile(deps, c, { section: 'passkeys', kind: 'error', message }, 400);
    }
    await renameOwnPasskey(deps, { accountId: session.account.id, id: form.data.id, name: form.data.name });
    return c.redirect('/profile?notice=passkey-renamed#profile-passkeys', 303);
  });

  // Asked first: a post without confirm=yes (a form of another page, a script) shows the step instead.
  app.post('/profile/passkeys/remove', async (c) => {
    const session = signedIn(c);
    const form = parseForm(c, removeSchema);
    if (!form.ok) {
      const message = Object.values(form.errors)[0] ?? 'Check the form and try again.';
      return renderProfile(deps, c, { section: 'passkeys', kind: 'error', message }, 400);
    }
    if (form.data.confirm !== 'yes')
      return c.redirect(`/profile?remove-passkey=${encodeURIComponent(form.data.id)}#passkey-remove`, 303);
    const result = await removeOwnPasskey(deps, {
      accountId: session.account.id,
      sessionIdHash: session.idHash,
      id: form.data.id,
    });
    if (!result.ok) return c.redirect('/profile?notice=confirm-first-passkeys#profile-passkeys', 303);
    const notice = result.lastFactor ? 'passkey-removed-last' : 'passkey-removed';
    return c.redirect(`/profile?notice=${notice}#profile-passkeys`, 303);
  });

  return app;
}
