// The HTTP side of "a reload never mints twice": a minting form carries a one-time token and
// answers with a redirect; the page after it shows the secret once. See reveals.service.ts for how it is held.
import { holdSecret, newFormToken, spendOnceToken, takeSecret } from './reveals.service.ts';
import { readSessionCookie } from '../../http/cookies.ts';
import type { Ctx } from '../../http/env.ts';

/** Holds `value` for this session until the page after the redirect shows it (one per kind; a newer replaces it). */
export async function revealLater(c: Ctx, kind: string, value: string): Promise<void> {
  const deps = c.get('deps');
  const cookie = readSessionCookie(c, deps.config);
  if (!cookie || !c.get('session')) throw new Error('revealLater needs a session');
  await holdSecret(deps, cookie, kind, value);
}

/** The held secret of this kind, taken: shown now and never again. Undefined on a reload or Back. */
export async function revealNow(c: Ctx, kind: string): Promise<string | undefined> {
  const deps = c.get('deps');
  const cookie = readSessionCookie(c, deps.config);
  if (!cookie || !c.get('session')) return undefined;
  return takeSecret(deps, cookie, kind);
}

/** The hidden one-time token of a minting form: the first post that carries it mints, any later one does not. */
export function OnceField() {
  return <input type="hidden" name="_once" value={newFormToken()} />;
}

/** Spends the posted form's one-time token; false when it is missing, malformed or already spent by this session. */
export async function spendOnce(c: Ctx): Promise<boolean> {
  const session = c.get('session');
  if (!session) return false;
  return spendOnceToken(c.get('deps'), session.idHash, c.get('form')?.get('_once') ?? '');
}
