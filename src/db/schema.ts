// Table types shared by both dialects. Times are epoch milliseconds; flags are 0/1 integers.
import type { Generated } from 'kysely';

/** A local account; role is read from here on every request. totp_secret is set only once TOTP is enabled. */
export interface AccountsTable {
  id: string;
  username: string;
  /** Lower-cased username: the unique, case-insensitive key. */
  username_lower: string;
  /**
   * UTS #39 confusable skeleton of the username, unique; NULL only for a newer account that already collided at 0013.
   */
  username_skeleton: string | null;
  password_hash: string;
  role: 'admin' | 'viewer';
  totp_secret: string | null;
  totp_enabled: number;
  /** Last accepted TOTP time step: a code at or before it is a replay. */
  totp_last_step: number | null;
  /** 1 when the next sign-in should walk the account through second-factor enrolment. */
  totp_enrol_prompt: number;
  /** Bumped by every password change: sessions created under an older version are refused. */
  credentials_version: Generated<number>;
  created_at: number;
  /**
   * When an administrator suspended the account; NULL while active. A suspended account cannot sign in or use tokens.
   */
  suspended_at: number | null;
  /** The last completed sign-in (password or SSO, second factor included); NULL before the first. */
  last_sign_in_at: number | null;
}

/** A server-side session; the cookie holds the id, this row only its SHA-256. */
export interface SessionsTable {
  id_hash: string;
  /** Random, non-secret id naming the session in the owner's session list (never the cookie or its hash). */
  public_id: string;
  account_id: string;
  /** full: signed in; totp: owes a second-factor code; enrol: offered enrolment after the password. */
  stage: 'full' | 'totp' | 'enrol';
  csrf_token: string;
  created_at: number;
  last_seen_at: number;
  /** Absolute end of the session, whatever the activity. */
  expires_at: number;
  user_agent: string;
  /** The account's credentials_version when the session was created (or when it changed the password itself). */
  credentials_version: Generated<number>;
  /** When this session last re-typed its password or a second-factor code ("Confirm it's you"); NULL if never. */
  reauthed_at: number | null;
  /** The provider whose sign-in opened this session; NULL for a password sign-in. */
  sso_provider_id: Generated<string | null>;
  /** The verified `sub` of that sign-in (back-channel logouts name it). */
  sso_sub: Generated<string | null>;
  /** The provider's session id (`sid`) from the id_token, when it carried one. */
  sso_sid: Generated<string | null>;
  /** The id_token itself, the hint for signing out at the provider; never logged or shown, deleted with the session. */
  sso_id_token: Generated<string | null>;
}

/** A TOTP secret awaiting its confirming code, bound to the session that passed the password check. */
export interface TotpEnrolmentsTable {
  session_id_hash: string;
  secret: string;
  created_at: number;
  expires_at: number;
}

/** Failure counters for sign-in and second-factor attempts, keyed per account and per client address. */
export interface AuthThrottleTable {
  key: string;
  failures: number;
  window_started_at: number;
  locked_until: number;
  /** Consecutive locks of an escalating key; only a success (or a long quiet spell) resets it. */
  locks: Generated<number>;
  /**
   * Until when the row can still change a decision (window, lock, escalation memory); housekeeping deletes it after.
   */
  keep_until: Generated<number>;
}

/** Generated setup tokens (hashes) while no account exists. */
export interface SetupTokensTable {
  token_hash: string;
  created_at: number;
}

/** Singleton facts such as "setup completed"; the primary key makes them race-free. */
export interface MetaTable {
  key: string;
  value: string;
}

/** A single-use invitation binding only a role. */
export interface InvitationsTable {
  id: string;
  token_hash: string;
  role: 'admin' | 'viewer';
  created_at: number;
  expires_at: number;
  spent_at: number | null;
  revoked_at: number | null;
  /** The admin who minted it; NULL when minted from the host command line (`svc invite`). */
  created_by: string | null;
  /** Optional label shown only in the admin's list of open invitations (at most 200 code points); binds nothing. */
  note: string | null;
}

/** One recovery code of an account, stored only as a salted hash. */
export interface RecoveryCodesTable {
  id: string;
  account_id: string;
  code_hash: string;
  used_at: number | null;
  created_at: number;
}

/** A personal API token, stored only as its SHA-256. */
export interface ApiTokensTable {
  id: string;
  account_id: string;
  name: string;
  token_hash: string;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
  /** 1: GET and HEAD only; every write through it answers 403. */
  read_only: number;
}

/** The first answer to POST /api/messages per (account, Idempotency-Key), kept 24 hours for retries. */
/** An SSO flow whose callback was taken: its state's SHA-256, kept until the flow would have expired. */
export interface SsoSpentStatesTable {
  state_hash: string;
  expires_at: number;
}

/** A back-channel logout token's `jti` (SHA-256) accepted from a provider, kept until the token would be too old. */
export interface SsoLogoutJtisTable {
  provider_id: string;
  jti_hash: string;
  expires_at: number;
}

/** A sign-out at the provider waiting for its browser: the end-session URL, found by the handle's SHA-256. */
export interface SsoSignOutsTable {
  handle_hash: string;
  provider_id: string;
  url: string;
  expires_at: number;
}

export interface ApiIdempotencyTable {
  account_id: string;
  key: string;
  /** SHA-256 of the request as validated, so the same key with another body is told apart. */
  request_hash: string;
  status: number;
  /** The JSON body answered the first time. */
  response: string;
  created_at: number;
}

/** A stored message: computed once at emission, never recomputed. */
export interface MessagesTable {
  id: string;
  class: 'drift' | 'coverage' | 'clock';
  cause: 'drift' | 'aperture' | 'declared-input' | 'threshold';
  subject_kind: string;
  subject_key: string;
  instant: number;
  headline: string;
  census: number | null;
  link: string | null;
  /** The channel body JSON, serialized once. */
  body: string;
  created_at: number;
}

/** A notification channel (HTTPS endpoint). */
export interface ChannelsTable {
  id: string;
  url: string;
  /** Write-only HMAC secret; never rendered. */
  secret: string | null;
  /** Sorted, comma-separated classes. */
  classes: string;
  enabled: number;
  consecutive_failures: number;
  last_error: string | null;
  last_error_at: number | null;
  last_success_at: number | null;
  /**
   * When the current failure streak began (the first failed attempt since the last success); NULL while not failing.
   */
  failing_since: number | null;
  created_at: number;
  updated_at: number;
  created_by: string;
}

/** One message to one channel: the outbox row the worker claims. */
export interface DeliveriesTable {
  id: string;
  message_id: string;
  channel_id: string | null;
  state: 'pending' | 'delivered' | 'dead' | 'cancelled';
  attempts: number;
  next_attempt_at: number;
  lease_owner: string | null;
  lease_until: number | null;
  delivered_at: number | null;
  last_error: string | null;
  created_at: number;
  /** When the row last changed: created, an attempt recorded, cancelled. Leases do not touch it. */
  updated_at: number;
}

/** One POST attempt of a delivery and its verdict: at most five per delivery (a re-send is a new delivery). */
export interface DeliveryAttemptsTable {
  delivery_id: string;
  /** 1 to 5, in order; with delivery_id the primary key, so an attempt is never recorded twice. */
  attempt_no: number;
  started_at: number;
  duration_ms: number;
  verdict: 'delivered' | 'failed';
  /** The HTTP status, null when no response came (timeout, refused, DNS or TLS failure). */
  status_code: number | null;
  error: string | null;
  /** The first bytes (at most 1 KiB) of the response body as UTF-8, null when there was none. */
  response_excerpt: string | null;
}

/** An account's read-all watermark: messages created at or before read_through are read. */
export interface MessageReadMarksTable {
  account_id: string;
  read_through: number;
  updated_at: number;
}

/** A message an account read individually, above its watermark. */
export interface MessageReadsTable {
  account_id: string;
  message_id: string;
  /** Copy of the message's created_at, to drop rows below a moved watermark without a join. */
  message_created_at: number;
  read_at: number;
}

/** An administrator-declared OpenID Connect provider. */
export interface SsoProvidersTable {
  id: string;
  display_name: string;
  /** URL-safe id in the flow routes; unique. */
  slug: string;
  /** https issuer; discovery reads <issuer>/.well-known/openid-configuration. */
  issuer: string;
  client_id: string;
  /** Write-only; null for a public (PKCE-only) client. */
  client_secret: string | null;
  enabled: number;
  created_at: number;
  updated_at: number;
  created_by: string;
  /** 1: signing out of a session this provider opened also signs out at its end-session endpoint. */
  sign_out_at_provider: Generated<number>;
  /** How svc sends the secret to the token endpoint: automatic (header, then body once if refused) or one method. */
  client_auth_method: Generated<'automatic' | 'client_secret_basic' | 'client_secret_post'>;
  /** The method an automatic provider accepted after its first choice was refused; null until then. */
  client_auth_learned: 'client_secret_basic' | 'client_secret_post' | null;
  /** When client_auth_learned was learned. */
  client_auth_learned_at: number | null;
}

/** A verified (provider, sub) bound to a local account by its holder. */
export interface SsoIdentitiesTable {
  id: string;
  provider_id: string;
  sub: string;
  account_id: string;
  /** Display label from the id_token (e-mail, username or name claim; sub otherwise); never used to match. */
  label: string;
  linked_at: number;
}

/** A registered passkey or security key (WebAuthn credential). The public key is not secret but is never shown. */
export interface PasskeysTable {
  id: string;
  account_id: string;
  /** The credential id, base64url; unique across all accounts. */
  credential_id: string;
  /** The COSE public key, base64url. */
  public_key: string;
  /** The last signature counter seen; a lower one (when not 0) means the key may have been cloned. */
  counter: number;
  /** Comma-separated transports the authenticator reported (usb, nfc, ble, internal, hybrid…); may be empty. */
  transports: string;
  /** multiDevice: a synced passkey; singleDevice: bound to one authenticator. */
  device_type: 'singleDevice' | 'multiDevice';
  /** 1 when the authenticator said the credential is backed up (synced). */
  backed_up: number;
  /** The holder's name for it. */
  name: string;
  created_at: number;
  last_used_at: number | null;
}

/** A WebAuthn challenge held for one session or pending sign-in and purpose; taken by the answer that uses it. */
export interface WebauthnChallengesTable {
  /** SHA-256 of the session id, or of the pending sign-in's cookie, that asked. */
  owner_hash: string;
  purpose: 'register' | 'second-factor' | 'sign-in';
  /** base64url, as sent in the options. */
  challenge: string;
  expires_at: number;
}

/** The whole database as Kysely sees it. */
/** A secret minted by a form, held sealed for the session that minted it until the page after the redirect shows it. */
export interface SessionRevealsTable {
  session_id_hash: string;
  kind: string;
  /** AES-256-GCM under a key derived from the session's cookie value, which the database never holds. */
  sealed: string;
  created_at: number;
}

/** One-time tokens of minting forms already used by a session: a form sent twice mints once. */
export interface SpentFormTokensTable {
  session_id_hash: string;
  token_hash: string;
  spent_at: number;
}

/** An administrator-minted password reset link: at most one per account, stored only as the token's SHA-256. */
export interface PasswordResetsTable {
  account_id: string;
  token_hash: string;
  created_at: number;
  expires_at: number;
}

export interface DB {
  accounts: AccountsTable;
  sessions: SessionsTable;
  session_reveals: SessionRevealsTable;
  spent_form_tokens: SpentFormTokensTable;
  password_resets: PasswordResetsTable;
  totp_enrolments: TotpEnrolmentsTable;
  auth_throttle: AuthThrottleTable;
  setup_tokens: SetupTokensTable;
  meta: MetaTable;
  invitations: InvitationsTable;
  recovery_codes: RecoveryCodesTable;
  api_tokens: ApiTokensTable;
  api_idempotency: ApiIdempotencyTable;
  sso_spent_states: SsoSpentStatesTable;
  sso_logout_jtis: SsoLogoutJtisTable;
  sso_sign_outs: SsoSignOutsTable;
  messages: MessagesTable;
  channels: ChannelsTable;
  deliveries: DeliveriesTable;
  delivery_attempts: DeliveryAttemptsTable;
  message_read_marks: MessageReadMarksTable;
  message_reads: MessageReadsTable;
  sso_providers: SsoProvidersTable;
  sso_identities: SsoIdentitiesTable;
  passkeys: PasskeysTable;
  webauthn_challenges: WebauthnChallengesTable;
}
