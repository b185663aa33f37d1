// The one script svc serves: the WebAuthn ceremony (passkeys), which browsers offer only to script. It is bundled by the
// build (scripts/build.mjs) into static/passkeys.js from @simplewebauthn/browser and a few lines of svc's own, served
// at a path naming its content (cached for a year), and allowed by the Content-Security-Policy only on the pages that
// run a ceremony; every other page keeps `script-src 'none'`. The pages pass it nothing inline: each ceremony is a
// normal form whose data attributes say where its options come from, and the script fills the form's hidden answer
// and submits it. Without the script (JavaScript off, or no WebAuthn) the form stays hidden and its words say why.
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Child } from 'hono/jsx';
import { Form } from './views/components.tsx';

/** The built script as served: its content-named path, its Subresource Integrity value and its text. */
export interface CeremonyScript {
  href: string;
  integrity: string;
  body: string;
}

/** Reads the built script (a missing build is a clear start-up error, not a silently broken sign-in page). */
export function loadCeremonyScript(file: URL): CeremonyScript {
  let body: string;
  try {
    body = fs.readFileSync(file, 'utf8');
  } catch {
    throw new Error(`${file.pathname} is missing: build it with \`npm run build\``);
  }
  const digest = crypto.hash('sha384', body, 'base64');
  const name = crypto.hash('sha256', body, 'hex').slice(0, 16);
  return { href: `/static/passkeys-${name}.js`, integrity: `sha384-${digest}`, body };
}

/** The kinds of ceremony a page may run, which the script reads from `data-ceremony`. */
export type CeremonyKind = 'register' | 'sign-in' | 'second-factor';

/**
 * One ceremony: words shown while the script cannot run (`unavailable`), and the form it reveals when it can. The form
 * posts to `action` with the answer in a hidden field named `answer`; the script fetches the options first by posting
 * the form token to `options`. `children` are the form's other fields (a passkey's name) and its submit button.
 */
export function CeremonyForm(props: {
  kind: CeremonyKind;
  id: string;
  action: string;
  options: string;
  unavailable: string;
  children: Child;
}) {
  return (
    <div class="ceremony" data-ceremony={props.kind} data-options={props.options}>
      <p class="hint ceremony-unavailable" data-unavailable>
        {props.unavailable}
      </p>
      <div data-available hidden>
        <Form action={props.action} id={props.id}>
          <input type="hidden" name="answer" value="" />
          {props.children}
        </Form>
        <p class="hint" data-status role="status" aria-live="polite" />
      </div>
    </div>
  );
}
