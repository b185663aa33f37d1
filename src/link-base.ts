// Where the links the command line prints start (kept apart from config.ts, so a command's --help loads no zod).
import { isIPv6 } from 'node:net';
import type { Config } from './config.ts';

/**
 * Where the links the command line prints (setup, join and reset links) start: SVC_EXTERNAL_URL, else this host at
 * `port`: localhost when listening on every address, else the address or name listened on (HOST=127.0.0.1 may not
 * answer on localhost, which can mean ::1).
 */
export function linkBase(config: Pick<Config, 'externalUrl' | 'host' | 'port'>, port = config.port): string {
  if (config.externalUrl) return config.externalUrl;
  const host = config.host === '' || config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  return `http://${isIPv6(host) ? `[${host}]` : host}:${port}`;
}
