// The profile page's sections, the one place that lists them: each is built by its feature against the interface in
// src/http/views/profile.tsx, and the page renders them in this order.
import type { ProfileSection } from '../../http/views/profile.tsx';
import { confirmSection } from './confirm.section.tsx';
import { passwordSection } from './password.section.tsx';
import { passkeysSection } from './passkeys.section.tsx';
import { secondFactorSection } from './second-factor.section.tsx';
import { sessionsSection } from './sessions.section.tsx';
import { tokensSection } from '../tokens/tokens.section.tsx';
import { ssoProfileSection } from '../sso/sso.profile.tsx';

/** All sections, in display order. Every signed-in account sees all of them (viewers included). */
export const profileSections: ProfileSection[] = [
  passwordSection,
  confirmSection,
  secondFactorSection,
  passkeysSection,
  ssoProfileSection,
  tokensSection,
  sessionsSection,
];
