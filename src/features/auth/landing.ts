// Where a session goes next, by stage; shared by the password, second-factor and SSO sign-in routes.
import type { Stage } from './sessions.service.ts';

/** Where a session in a given stage goes next. */
export function landingFor(stage: Stage): string {
  return stage === 'full' ? '/' : stage === 'totp' ? '/login/totp' : '/login/enrol';
}
