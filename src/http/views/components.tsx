// Small form components: every control has a real <label>, errors sit next to their field.
import type { Child } from 'hono/jsx';
import { createContext, useContext } from 'hono/jsx';

/** The session's form token, provided once by the layout so every <Form> carries it. */
export const CsrfContext = createContext<string | undefined>(undefined);

/** A POST form that always carries the session's form token. */
export function Form(props: { action: string; children: Child; class?: string }) {
  const csrf = useContext(CsrfContext);
  return (
    <form method="post" action={props.action} class={props.class}>
      {csrf ? <input type="hidden" name="_csrf" value={csrf} /> : null}
      {props.children}
    </form>
  );
}

let fieldSeq = 0;

/** A labelled input with its error message underneath. */
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
  const id = `f-${props.name}-${++fieldSeq}`;
  return (
    <div class={props.error ? 'field has-error' : 'field'}>
      <label for={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type={props.type ?? 'text'}
        value={props.value}
        autocomplete={props.autocomplete}
        required={props.required}
        maxlength={props.maxlength}
        inputmode={props.inputmode}
        aria-invalid={props.error ? 'true' : undefined}
        aria-describedby={props.error ? `${id}-error` : undefined}
      />
      {props.hint ? <p class="hint">{props.hint}</p> : null}
      {props.error ? (
        <p class="error" id={`${id}-error`}>
          {props.error}
        </p>
      ) : null}
    </div>
  );
}

/** A labelled select. */
export function Select(props: { label: string; name: string; options: [string, string][]; value?: string; error?: string }) {
  const id = `f-${props.name}-${++fieldSeq}`;
  return (
    <div class={props.error ? 'field has-error' : 'field'}>
      <label for={id}>{props.label}</label>
      <select id={id} name={props.name}>
        {props.options.map(([value, text]) => (
          <option value={value} selected={value === props.value}>
            {text}
          </option>
        ))}
      </select>
      {props.error ? <p class="error">{props.error}</p> : null}
    </div>
  );
}

/** A labelled checkbox. */
export function Checkbox(props: { label: string; name: string; value?: string; checked?: boolean }) {
  const id = `f-${props.name}-${++fieldSeq}`;
  return (
    <div class="field checkbox">
      <input id={id} type="checkbox" name={props.name} value={props.value ?? 'on'} checked={props.checked} />
      <label for={id}>{props.label}</label>
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
