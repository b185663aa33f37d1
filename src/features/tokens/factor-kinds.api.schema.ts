// The API's one shape of an account's second factors, as kinds only (GET /api/me and the accounts API both answer
// with it, from factorKinds): never a credential, its id or its public key.
import { z } from '@hono/zod-openapi';

export const SecondFactors = z.array(z.enum(['totp', 'passkey'])).openapi({
  description:
    'The kinds of second factor the account has, each at most once, in this order: `totp` (an authenticator app) and `passkey` (one or more passkeys or security keys). Empty when it has none.',
  example: ['totp', 'passkey'],
});
