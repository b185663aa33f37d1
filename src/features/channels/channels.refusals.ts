// The channel acts' refusals: one catalogue per rule, from each reason to the words the settings page shows beside the
// field and the JSON API names in `errors` (or as the problem's `detail`). A reason without words does not compile.
import { CLASSES } from '../messages/classes.ts';
import { NOT_ADMIN, type Refusal } from '../refusals.ts';
import { CHANNEL_URL_MAX } from './channel-url.ts';
import { CHANNEL_SECRET_MAX } from './channels.service.ts';

/** Why a channel URL is refused (see validateChannelUrl). */
export type ChannelUrlReason =
  | 'missing'
  | 'too-long'
  | 'not-absolute'
  | 'not-web'
  | 'credentials'
  | 'no-host'
  | 'port-zero'
  | 'http-host-name'
  | 'http-not-loopback'
  | 'this-machine'
  | 'internal-address';

/** What a URL refusal's words name: the host as parsed, its IP literal and the address range it falls in. */
export interface UrlFacts {
  protocol: string;
  host: string;
  ip: string;
  range: string;
}

const HTTP_HINT =
  'http:// is only allowed to a loopback IP address such as http://127.0.0.1:8080/ or http://[::1]:8080/';
const PUBLIC = 'Channels must point at a publicly reachable host.';
const url = (words: Refusal<UrlFacts>['words']): Refusal<UrlFacts> => ({ words, status: 400, field: 'url' });

export const CHANNEL_URL_REFUSALS = {
  missing: url("Enter the channel's URL."),
  // Words that name a limit are read when shown: the limit's module imports this one.
  'too-long': url(() => `The URL may be at most ${CHANNEL_URL_MAX} characters.`),
  'not-absolute': url('This is not an absolute URL. Enter the full address, starting with https://.'),
  'not-web': url(({ protocol }) => `Channels are reached over https:// only (${protocol} was given).`),
  credentials: url(
    'The URL may not contain a user name or password (user:password@host). Use the channel secret instead.',
  ),
  'no-host': url('The URL has no host.'),
  'port-zero': url('Port 0 cannot be connected to; give the port the receiver listens on.'),
  'http-host-name': url(({ host }) => `"${host}" is a host name, not an IP address; ${HTTP_HINT}.`),
  'http-not-loopback': url(({ host }) => `Plain http:// is refused for ${host}: use https://. ${HTTP_HINT}.`),
  'this-machine': url(({ host }) => `"${host}" names this machine, which is an internal address. ${PUBLIC}`),
  'internal-address': url(({ ip, range }) => `${ip} is an internal address (${range}). ${PUBLIC}`),
} satisfies Record<ChannelUrlReason, Refusal<UrlFacts>>;

/** Why a channel's classes or secret are refused. */
export type ChannelFieldReason = 'no-class' | 'unknown-class' | 'secret-too-long' | 'secret-control' | 'secret-blank';

export const CHANNEL_FIELD_REFUSALS = {
  'no-class': { words: 'Choose at least one class.', status: 400, field: 'classes' },
  'unknown-class': { words: `Unknown class. Choose from ${CLASSES.join(', ')}.`, status: 400, field: 'classes' },
  'secret-too-long': {
    words: () => `The secret may be at most ${CHANNEL_SECRET_MAX} characters.`,
    status: 400,
    field: 'secret',
  },
  'secret-control': { words: 'The secret may not contain control characters.', status: 400, field: 'secret' },
  'secret-blank': {
    words: 'The secret may not be blank. Leave it out to keep the stored one, or send null to remove it.',
    status: 400,
    field: 'secret',
  },
} satisfies Record<ChannelFieldReason, Refusal>;

/** Refusals of a channel act as a whole (a form's field errors aside). */
export type ChannelActReason = 'not-found' | 'not-admin';

export const CHANNEL_ACT_REFUSALS = {
  'not-admin': NOT_ADMIN,
  'not-found': { words: 'There is no channel with this id.', status: 404, type: 'not-found' },
} satisfies Record<ChannelActReason, Refusal>;
