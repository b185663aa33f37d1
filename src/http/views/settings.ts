// The interface of a settings tab and of the page that frames one. The settings feature lists the tabs in its tabs.ts,
// the one place that names them, and renders the frame; a feature whose routes show its tab in-band (a refused form, a
// confirmation step) receives that renderer from app.ts rather than importing the settings feature.
import type { Child } from 'hono/jsx';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Deps } from '../../deps.ts';
import type { Ctx } from '../env.ts';

/** One tab of /settings: its key in ?tab=, its label, and what it renders. */
export interface SettingsTab {
  key: string;
  label: string;
  render(deps: Deps, c: Ctx): Promise<Child>;
}

/** Renders the settings page: the tab bar with tab `current` marked, then `body`. */
export type RenderSettings = (c: Ctx, current: string, body: Child, status?: ContentfulStatusCode) => Promise<Response>;
