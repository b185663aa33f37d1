// The "Channels" tab of /settings: the channel list, create or edit form, and the retention dial.
import type { Child } from 'hono/jsx';
import type { Deps } from '../../deps.ts';
import type { Ctx } from '../../http/env.ts';
import { retentionDays } from '../messages/retention.service.ts';
import type { SettingsTab } from '../../http/views/settings.ts';
import { parsePageNumber } from '../../http/query.ts';
import { isId } from '../../http/text.ts';
import { findChannelSummary } from './channels.repo.ts';
import { channelsPage, type ChannelErrors } from './channels.service.ts';
import {
  ChannelList,
  ChannelsTabView,
  CreateChannelForm,
  EditChannelForm,
  RetentionForm,
  channelNotice,
} from './channels.views.tsx';

/**
 * What a failed POST hands back to the tab: which form, its values and errors, and whether to ask for the secret again.
 */
export type ChannelsTabState =
  | { form: 'create'; values: { url?: string; classes?: string[] }; errors: ChannelErrors; askSecret?: boolean }
  | {
      form: 'edit';
      id: string;
      values: { url?: string; classes?: string[]; enabled?: boolean };
      errors: ChannelErrors;
      askSecret?: boolean;
    }
  | { form: 'retention'; value: string; error: string };

/** The tab body, for GET /settings?tab=channels and for re-rendering after a refused POST. */
export async function channelsTabBody(deps: Deps, c: Ctx, state?: ChannelsTabState): Promise<Child> {
  const page = await channelsPage(deps, parsePageNumber(c.req.query('page')));
  const editId = state?.form === 'edit' ? state.id : c.req.query('edit');
  const editing = editId && isId(editId) ? await findChannelSummary(deps.db, editId) : undefined;
  const form = editing ? (
    <EditChannelForm
      channel={editing}
      values={state?.form === 'edit' ? state.values : undefined}
      errors={state?.form === 'edit' ? state.errors : undefined}
      askSecret={state?.form === 'edit' && state.askSecret === true}
    />
  ) : (
    <CreateChannelForm
      values={state?.form === 'create' ? state.values : undefined}
      errors={state?.form === 'create' ? state.errors : undefined}
      askSecret={state?.form === 'create' && state.askSecret === true}
    />
  );
  const days = await retentionDays(deps);
  return (
    <ChannelsTabView
      notice={channelNotice(editId && !editing ? 'gone' : c.req.query('notice'))}
      list={<ChannelList {...page} />}
      form={form}
      retention={
        <RetentionForm
          days={days}
          value={state?.form === 'retention' ? state.value : undefined}
          error={state?.form === 'retention' ? state.error : undefined}
        />
      }
    />
  );
}

/** The tab registered in settings/tabs.ts. */
export const channelsTab: SettingsTab = {
  key: 'channels',
  label: 'Channels',
  render: (deps, c) => channelsTabBody(deps, c),
};
