// The settings frame's tab bar, shared by GET /settings and by settings POST routes that render a tab in-band.
import type { Child } from 'hono/jsx';
import { settingsTabs } from './tabs.ts';

/** The tab bar with `current` marked, followed by the tab's body. */
export function SettingsFrame(props: { current: string; children: Child }) {
  return (
    <>
      <nav class="tabs" aria-label="Settings">
        {settingsTabs.map((t) => (
          <a href={`/settings?tab=${t.key}`} aria-current={t.key === props.current ? 'page' : undefined}>
            {t.label}
          </a>
        ))}
      </nav>
      {props.children}
    </>
  );
}
