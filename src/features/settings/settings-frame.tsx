// The settings screen's frame (tab navigation around a tab's body), shared by GET /settings and by feature
// routes that re-render their tab with form errors.
import type { Child } from 'hono/jsx';
import type { Ctx } from '../../http/env.ts';
import { render } from '../../http/render.tsx';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { settingsTabs } from './tabs.ts';

/** The tab navigation with `current` marked. */
export function SettingsNav(props: { current: string }) {
  return (
    <nav class="tabs" aria-label="Settings">
      {settingsTabs.map((t) => (
        <a href={`/settings?tab=${t.key}`} aria-current={t.key === props.current ? 'page' : undefined}>
          {t.label}
        </a>
      ))}
    </nav>
  );
}

/** Renders a full settings page with `body` under the tab `current`. */
export function renderSettings(c: Ctx, current: string, body: Child, status: ContentfulStatusCode = 200): Promise<Response> {
  return render(
    c,
    'Settings',
    <>
      <SettingsNav current={current} />
      {body}
    </>,
    status,
  );
}
