// The outbound request's headers (docs/delivery.md, "The request"): a timestamp always, an HMAC signature only with
// a secret.
import crypto from 'node:crypto';

/** Version tag of the signature encoding; a future scheme would add v2 alongside, never change v1. */
export const SIGNATURE_VERSION = 'v1';

/**
 * The X-Svc-Signature value: `v1=` followed by the lowercase hex HMAC-SHA256, keyed with the channel
 * secret's UTF-8 bytes, over the UTF-8 bytes of `<unix-seconds>.<body>`.
 */
export function signBody(secret: string, unixSeconds: number, body: string): string {
  const mac = crypto
    .createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(`${unixSeconds}.`, 'utf8')
    .update(body, 'utf8')
    .digest('hex');
  return `${SIGNATURE_VERSION}=${mac}`;
}

/**
 * Every header of one attempt. No Authorization header is ever sent: the URL and the signature are the only
 * credentials.
 */
export function deliveryHeaders(body: string, secret: string | null, unixSeconds: number): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'svc-delivery/1',
    'x-svc-timestamp': String(unixSeconds),
  };
  if (secret) headers['x-svc-signature'] = signBody(secret, unixSeconds, body);
  return headers;
}
