// Small form components: every control has a real <label>, errors sit next to their field.
import type { Child } from 'hono/jsx';
import { createContext, useContext } from 'hono/jsx';

/** The session's form token, provided once by the layout so every <Form> carries it. */
export const CsrfContext = createContext<string | undefined>(undefined);

/** What a <Form> with an `id` tells the controls inside it: its id (the prefix of theirs) and its field errors. */
interface FormState {
  id: string;
  errors: Record<string, string>;
}

const FormContext = createContext<FormState | undefined>(undefined);

/**
 * A POST form that always carries the session's form token. With an `id`, its controls get ids `<id>-<name>`, and a
 * non-empty `errors` map (field name → message, as parseForm returns) shows a summary linking to each field and puts
 * each message beside its field; the `_form` key is a message for the whole form, shown in the summary unlinked.
 * The summary takes focus when the page loads (`autofocus`, no script), so the page answered after a failed post
 * opens at the form. Not a `#fragment` on the action: a browser carries that fragment over the redirect after a
 * successful post, which would scroll the next page away from its notice.
 */
export function Form(props: {
  action: string;
  children: Child;
  class?: string;
  id?: string;
  errors?: Record<string, string>;
}) {
  const csrf = useContext(CsrfContext);
  const id = props.id;
  const errors = props.errors ?? {};
  const keys = Object.keys(errors);
  const form = (
    <form method="post" action={props.action} class={props.class} id={id}>
      {csrf ? <input type="hidden" name="_csrf" value={csrf} /> : null}
      {id && keys.length > 0 ? (
        <div class="error-summary" role="alert" aria-labelledby={`${id}-summary`} tabindex={-1} autofocus>
          <h2 id={`${id}-summary`}>{keys.length === 1 ? 'There is a problem' : `There are ${keys.length} problems`}</h2>
          <ul>
            {keys.map((name) => (
              <li>{name === '_form' ? errors[name] : <a href={`#${id}-${name}`}>{errors[name]}</a>}</li>
            ))}
          </ul>
        </div>
      ) : null}
      {props.children}
    </form>
  );
  return id ? <FormContext.Provider value={{ id, errors }}>{form}</FormContext.Provider> : form;
}

/** The deleting button of a confirmation step: posts `id` with confirm=yes to `action` (only this button deletes). */
export function ConfirmedDelete(props: { action: string; id: string; children: Child }) {
  return (
    <Form action={props.action} class="inline">
      <input type="hidden" name="id" value={props.id} />
      <input type="hidden" name="confirm" value="yes" />
      <button type="submit" class="danger">
        {props.children}
      </button>
    </Form>
  );
}

let fieldSeq = 0;

/** The id, error and description ids of one control: from its form when the form has an id, else a fresh id. */
function control(name: string, explicit: { error?: string; hint?: string; suffix?: string }) {
  const form = useContext(FormContext);
  const id = form ? `${form.id}-${name}${explicit.suffix ? `-${explicit.suffix}` : ''}` : `f-${name}-${++fieldSeq}`;
  const error = explicit.error ?? form?.errors[name];
  const hintId = explicit.hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  return { id, error, hintId, errorId, describedBy };
}

/** A control's hint and error lines, tied to it by id. */
function Help(props: { hint?: string; hintId?: string; error?: string; errorId?: string }) {
  return (
    <>
      {props.hint ? (
        <p class="hint" id={props.hintId}>
          {props.hint}
        </p>
      ) : null}
      {props.error ? (
        <p class="error" id={props.errorId}>
          {props.error}
        </p>
      ) : null}
    </>
  );
}

/** A labelled input with its hint and error message underneath. */
export function Field(props: {
  label: string;
  name: string;
  type?: string;
  value?: string;
  error?: string;
  autocomplete?: string;
  required?: boolean;
  maxlength?: number;
  inputmode?: 'numeric' | 'text';
  hint?: string;
}) {
  const c = control(props.name, props);
  return (
    <div class={c.error ? 'field has-error' : 'field'}>
      <label for={c.id}>{props.label}</label>
      <input
        id={c.id}
        name={props.name}
        type={props.type ?? 'text'}
        value={props.value}
        autocomplete={props.autocomplete}
        required={props.required}
        maxlength={props.maxlength}
        inputmode={props.inputmode}
        aria-invalid={c.error ? 'true' : undefined}
        aria-describedby={c.describedBy}
      />
      <Help hint={props.hint} hintId={c.hintId} error={c.error} errorId={c.errorId} />
    </div>
  );
}

/** A labelled select with its hint and error message underneath. */
export function Select(props: {
  label: string;
  name: string;
  options: [string, string][];
  value?: string;
  error?: string;
  hint?: string;
}) {
  const c = control(props.name, props);
  return (
    <div class={c.error ? 'field has-error' : 'field'}>
      <label for={c.id}>{props.label}</label>
      <select id={c.id} name={props.name} aria-invalid={c.error ? 'true' : undefined} aria-describedby={c.describedBy}>
        {props.options.map(([value, text]) => (
          <option value={value} selected={value === props.value}>
            {text}
          </option>
        ))}
      </select>
      <Help hint={props.hint} hintId={c.hintId} error={c.error} errorId={c.errorId} />
    </div>
  );
}

/**
 * A labelled checkbox. A box with its own `value` (one of several sharing a name) gets the id
 * `<form id>-<name>-<value>`; the error summary's link for that name then belongs on their fieldset
 * (`id="<form id>-<name>"`).
 */
export function Checkbox(props: {
  label: string;
  name: string;
  value?: string;
  checked?: boolean;
  error?: string;
  hint?: string;
}) {
  const own = props.value !== undefined && props.value !== 'on' ? props.value : undefined;
  const c = control(props.name, { error: props.error, hint: props.hint, suffix: own });
  return (
    <div class={c.error ? 'field checkbox has-error' : 'field checkbox'}>
      <input
        id={c.id}
        type="checkbox"
        name={props.name}
        value={props.value ?? 'on'}
        checked={props.checked}
        aria-invalid={c.error ? 'true' : undefined}
        aria-describedby={c.describedBy}
      />
      <label for={c.id}>{props.label}</label>
      <Help hint={props.hint} hintId={c.hintId} error={c.error} errorId={c.errorId} />
    </div>
  );
}

/** A notice or error banner. */
export function Notice(props: { kind: 'info' | 'error' | 'success'; children: Child }) {
  return (
    <div class={`notice ${props.kind}`} role={props.kind === 'error' ? 'alert' : 'status'}>
      {props.children}
    </div>
  );
}

/** Renders an epoch-millisecond time as an ISO-like UTC string. */
export function Time(props: { at: number | null | undefined }) {
  if (props.at === null || props.at === undefined) return <span>—</span>;
  const iso = new Date(props.at).toISOString();
  return <time datetime={iso}>{iso.slice(0, 16).replace('T', ' ')} UTC</time>;
}

/** How long ago `at` was, seen from `now`, in words: "just now", "3 min ago", "5 h ago", "2 days ago", "in 4 min". */
export function ago(at: number, now: number): string {
  const diff = now - at;
  const abs = Math.abs(diff);
  const minutes = Math.floor(abs / 60_000);
  const hours = Math.floor(abs / 3_600_000);
  const days = Math.floor(abs / 86_400_000);
  if (minutes < 1) return 'just now';
  const span = minutes < 60 ? `${minutes} min` : hours < 24 ? `${hours} h` : days === 1 ? '1 day' : `${days} days`;
  if (days >= 30) return new Date(at).toISOString().slice(0, 10);
  return diff >= 0 ? `${span} ago` : `in ${span}`;
}

/** A time shown relative to the request's clock ("3 min ago"), the absolute UTC time on hover and in `datetime`. */
export function RelativeTime(props: { at: number; now: number }) {
  const iso = new Date(props.at).toISOString();
  return (
    <time datetime={iso} title={`${iso.slice(0, 19).replace('T', ' ')} UTC`}>
      {ago(props.at, props.now)}
    </time>
  );
}

/** A table of rows in its own sideways-scrolling box, stacked into one block per row on narrow screens. */
export function StackedTable(props: { class: string; columns: (string | null)[]; children: Child }) {
  return (
    <div class="table-wrap">
      <table class={`${props.class} stacked`}>
        <thead>
          <tr>{props.columns.map((name) => (name === null ? null : <th scope="col">{name}</th>))}</tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}
