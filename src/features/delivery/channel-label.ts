// How a channel is named to someone who may not see its URL: a channel URL, host included, can itself be the
// credential (receivers often put a secret in the subdomain), so only administrators see it and
// everyone else sees an opaque label derived from the channel's random id.

/** The channel's URL for admins; "channel <short id>" for others; a fixed label once the channel is deleted. */
export function channelLabel(channel: { id: string | null; url: string | null }, showUrl: boolean): string {
  if (channel.url === null || channel.id === null) return 'a deleted channel';
  return showUrl ? channel.url : `channel ${channel.id.slice(0, 6)}`;
}
