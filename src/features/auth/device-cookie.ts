// The device cookie at the HTTP door: reading the token a browser shows, and setting it once a session is full.
import type { Deps } from '../../deps.ts';
import { readDeviceCookie, writeDeviceCookie } from '../../http/cookies.ts';
import type { Ctx } from '../../http/env.ts';
import { DEVICE_TTL_MS, deviceIssuingKey, deviceSigningKey, parseDeviceToken, type DeviceToken } from './device.ts';

/** The device token this browser shows, if its signature verifies and it is still within its lifetime. */
export async function presentedDevice(c: Ctx, deps: Deps): Promise<DeviceToken | undefined> {
  return parseDeviceToken(await readDeviceCookie(c, deps.config, () => deviceSigningKey(deps)), deps.clock.now());
}

/**
 * Sets (or renews) the device cookie with `token`. Called only when a session becomes fully signed in: a browser
 * that gave the password but not the second factor is not yet known to the account.
 */
export async function rememberDevice(c: Ctx, deps: Deps, token: string | undefined): Promise<void> {
  if (token) await writeDeviceCookie(c, deps.config, await deviceIssuingKey(deps), token, DEVICE_TTL_MS);
}
