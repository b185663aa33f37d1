// A software WebAuthn authenticator for HTTP-level tests (test-only code): ECDSA P-256 keys from node:crypto, a minimal
// CBOR encoder for the attestation object (fmt 'none') and the COSE public key, and assertions signed over
// authenticatorData || SHA-256(clientDataJSON), as an authenticator does. Every flag and the signature counter can be
// chosen, so tests can answer without user verification or with a counter that went backwards.
import crypto from 'node:crypto';
import type { TestClient } from './app.ts';

/** CBOR values this encoder writes: integers, byte strings, text strings and maps. */
type Cbor = number | Buffer | string | Map<Cbor, Cbor>;

function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 256) return Buffer.from([(major << 5) | 24, n]);
  if (n < 65536) return Buffer.from([(major << 5) | 25, n >> 8, n & 255]);
  throw new Error('too long for this encoder');
}

/** CBOR-encodes a value (RFC 8949, the definite-length forms only). */
export function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (Buffer.isBuffer(value)) return Buffer.concat([head(2, value.length), value]);
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  const parts = [head(5, value.size)];
  for (const [k, v] of value) parts.push(cbor(k), cbor(v));
  return Buffer.concat(parts);
}

const b64 = (b: Buffer) => b.toString('base64url');
const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

/** One credential the authenticator holds. */
export interface SoftCredential {
  id: string;
  privateKey: crypto.KeyObject;
  userHandle: string;
  counter: number;
}

/** What a ceremony may change about the authenticator's answer. */
export interface AnswerOptions {
  origin?: string;
  /** User verified (UV flag); true unless a test says otherwise. */
  userVerified?: boolean;
  /** The signature counter to report; the credential's next one unless given. */
  counter?: number;
  /** Which credential answers (sign-in with several); the first allowed or held one otherwise. */
  credentialId?: string;
  /** Registration only: register this credential again (its id and key) instead of a new one. */
  reuse?: SoftCredential;
}

/** A software authenticator for one relying party origin (http://localhost, the test client's). */
export class SoftAuthenticator {
  credentials: SoftCredential[] = [];
  constructor(readonly origin = 'http://localhost') {}

  private rpIdHash(rpId: string): Buffer {
    return crypto.createHash('sha256').update(rpId).digest();
  }

  private clientData(type: string, challenge: string, origin: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }), 'utf8');
  }

  /** Answers registration options (as @simplewebauthn/browser's startRegistration() would return). */
  register(options: any, opts: AnswerOptions = {}): any {
    const { privateKey, publicKey } = opts.reuse
      ? { privateKey: opts.reuse.privateKey, publicKey: crypto.createPublicKey(opts.reuse.privateKey) }
      : crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const id = opts.reuse ? Buffer.from(opts.reuse.id, 'base64url') : crypto.randomBytes(32);
    const counter = opts.counter ?? 0;
    const cose = cbor(
      new Map<Cbor, Cbor>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
    const flags = FLAG_UP | FLAG_AT | (opts.userVerified === false ? 0 : FLAG_UV);
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(id.length);
    const authData = Buffer.concat([
      this.rpIdHash(options.rp.id),
      Buffer.from([flags]),
      count,
      Buffer.alloc(16),
      idLength,
      id,
      cose,
    ]);
    const attestation = cbor(
      new Map<Cbor, Cbor>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]),
    );
    if (!opts.reuse) this.credentials.push({ id: b64(id), privateKey, userHandle: options.user.id, counter });
    return {
      id: b64(id),
      rawId: b64(id),
      type: 'public-key',
      response: {
        clientDataJSON: b64(this.clientData('webauthn.create', options.challenge, opts.origin ?? this.origin)),
        attestationObject: b64(attestation),
        transports: ['internal'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** Answers authentication options (as startAuthentication() would return). */
  assert(options: any, opts: AnswerOptions = {}): any {
    const allowed: string[] = (options.allowCredentials ?? []).map((c: { id: string }) => c.id);
    const credential =
      this.credentials.find((c) => c.id === opts.credentialId) ??
      this.credentials.find((c) => allowed.length === 0 || allowed.includes(c.id));
    if (!credential) throw new Error('no credential of this authenticator is allowed');
    const counter = opts.counter ?? credential.counter + 1;
    credential.counter = Math.max(credential.counter, counter);
    const flags = FLAG_UP | (opts.userVerified === false ? 0 : FLAG_UV);
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter);
    const authData = Buffer.concat([this.rpIdHash(options.rpId), Buffer.from([flags]), count]);
    const clientData = this.clientData('webauthn.get', options.challenge, opts.origin ?? this.origin);
    const signed = Buffer.concat([authData, crypto.createHash('sha256').update(clientData).digest()]);
    const signature = crypto.sign('sha256', signed, credential.privateKey);
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64(clientData),
        authenticatorData: b64(authData),
        signature: b64(signature),
        userHandle: credential.userHandle,
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}

/** Posts for a ceremony's options (as the ceremony script does) and returns them; throws when refused. */
export async function optionsFrom(client: TestClient, path: string): Promise<any> {
  const res = await client.post(path);
  if (res.status !== 200) throw new Error(`options refused: ${res.status} ${res.text.slice(0, 200)}`);
  return JSON.parse(res.text).options;
}

/**
 * Registers a passkey from Profile for a signed-in client (confirming the password first); returns the page after
 * the add (its location) and the credential.
 */
export async function registerPasskeyFor(
  client: TestClient,
  password: string,
  authenticator: SoftAuthenticator,
  name = '',
): Promise<{ location: string | undefined; status: number }> {
  await client.get('/profile');
  const confirmed = await client.post('/profile/reauth', { secret: password });
  if (confirmed.status !== 303) throw new Error(`confirmation refused: ${confirmed.status}`);
  await client.get('/profile/passkeys/add');
  const options = await optionsFrom(client, '/profile/passkeys/options');
  const answer = authenticator.register(options);
  const res = await client.post('/profile/passkeys/add', { answer: JSON.stringify(answer), name });
  return { location: res.location, status: res.status };
}
