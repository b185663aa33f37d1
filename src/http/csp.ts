// The Content-Security-Policy: none of svc's pages runs script, except the few that run a WebAuthn ceremony.

/** The Content-Security-Policy of every response: no script at all. */
export const CSP_DIRECTIVES = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'none'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:'],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
  objectSrc: ["'none'"],
};

/**
 * The policy of a page that runs a WebAuthn ceremony (src/http/ceremony.tsx): the same, except that scripts from svc
 * itself may run. svc serves exactly one (every other same-origin answer is HTML, CSS or JSON, which nosniff keeps from
 * running as script), and the page's tag also pins it by its integrity hash. Never 'unsafe-inline' or 'unsafe-eval'.
 */
export const CEREMONY_CSP = Object.entries({ ...CSP_DIRECTIVES, scriptSrc: ["'self'"] })
  .map(([name, values]) => `${name.replace(/[A-Z]/g, (ch) => `-${ch.toLowerCase()}`)} ${values.join(' ')}`)
  .join('; ');
