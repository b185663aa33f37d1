// The profile page's sections. Each feature registers its section here; the page renders them in this order.
import type { Child } from 'hono/jsx';
import type { Deps } from '../../deps.ts';
import type { Ctx } from '../../http/env.ts';
import type { ProfileFeedback } from './profile.page.tsx';
import { confirmSection } from './confirm.section.tsx';
import { passwordSection } from './password.section.tsx';
import { secondFactorSection } from './second-factor.section.tsx';
import { sessionsSection } from './sessions.section.tsx';
import { tokensSection } from './tokens.section.tsx';
import { ssoProfileSection } from '../sso/sso.profile.tsx';

/**
 * One section of /profile: its key (the anchor id and where feedback for it is shown) and what it renders, given the
 * feedback addressed to it (a section may show a refused form's field errors itself).
 */
export interface ProfileSection {
  key: string;
  /** Null or undefined when it has nothing to show (the page then leaves it out, unless it has a notice). */
  render(deps: Deps, c: Ctx, feedback?: ProfileFeedback): Promise<Child>;
}

/** All sections, in display order. Every signed-in account sees all of them (viewers included). */
export const profileSections: ProfileSection[] = [passwordSection, confirmSection, secondFactorSection, ssoProfileSection, tokensSection, sessionsSection];
