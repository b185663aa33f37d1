// How a channel is named to someone who may not see its URL: a channel URL can itself be the credential
// (SPEC 5.8), so only administrators see it; everyone else sees the host alone.

/** The channel's URL for admins; "channel at <host>" for others; a fixed label once the channel is deleted. */
export function channelLabel(url: string | null, showUrl: boolean): string {
  if (url === null) return 'a deleted channel';
  if (showUrl) return url;
  try {
    return `channel at ${new URL(url).host}`;
  } catch {
    return 'a channel';
  }
}
