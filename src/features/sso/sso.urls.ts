// The URLs an administrator registers at a provider, under svc's external origin.

/** The two callback URLs to register at a provider. */
export function callbackUrls(origin: string, slug: string): { login: string; link: string } {
  return { login: `${origin}/login/sso/${slug}/callback`, link: `${origin}/profile/sso/${slug}/link/callback` };
}

/** The post-logout redirect URI to register at a provider: the sign-in page, under svc's external origin. */
export function postLogoutRedirectUri(origin: string): string {
  return `${origin}/login`;
}

/** The back-channel logout URI to register at a provider. */
export function backchannelLogoutUri(origin: string, slug: string): string {
  return `${origin}/login/sso/${slug}/backchannel-logout`;
}
