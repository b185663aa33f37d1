// The settings frame's tab bar, and the settings page around a tab's body: GET /settings uses it, and app.ts hands
// renderSettings to the routes that render their tab in-band (a refused form, a confirmation step).
import type { Child } from 'hono/jsx';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Ctx } from '../../http/env.ts';
import { render } from '../../http/render.tsx';
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

/** The settings page with tab `current` marked and `body` under the tab bar (a RenderSettings). */
export function renderSettings(
  c: Ctx,
  current: string,
  body: Child,
  status: ContentfulStatusCode = 200,
): Promise<Response> {
  return render(c, 'Settings', <SettingsFrame current={current}>{body}</SettingsFrame>, status);
}
