// How a domain refusal is presented. Each domain action names its refusals as a union of reasons and keeps one table
// (its catalogue, beside its service) from every reason to a Refusal, typed `satisfies Record<Reason, Refusal<…>>` so a
// new reason without words does not compile. Every door shows the same words: the page (heading it or beside its
// field), the JSON API (`detail` of the problem, or of the field's error) and the command line.

/** The HTTP statuses a refusal may answer with (the page's and the API problem's). */
export type RefusalStatus = 400 | 401 | 403 | 404 | 409 | 422;

/** One refusal: its words, and what an HTTP door needs to answer it. */
export interface Refusal<Facts = void> {
  /** What every door says; a function when the words name something of the case (an account's username, say). */
  words: string | ((facts: Facts) => string);
  /** The status of the page and of the API's problem (a refusal on an API field answers 422). */
  status: RefusalStatus;
  /** The API problem's machine-readable type; absent for a refusal the API answers on `field`. */
  type?: string;
  /** The form field it belongs to: the page shows it beside that field, the API names it in `errors`. */
  field?: string;
}

/** The words of `refusal` for this case. */
export function wordsOf<Facts>(refusal: Refusal<Facts>, facts: Facts): string {
  return typeof refusal.words === 'function' ? refusal.words(facts) : refusal.words;
}

/** The refusal every admin act shares: its actor is not an active administrator (see actorIsAdmin). */
export const NOT_ADMIN = {
  words: 'This action is for administrators.',
  status: 403,
  type: 'admin-only',
} as const satisfies Refusal<unknown>;
