// The ceremony script, run in the browser on the pages that run a WebAuthn ceremony (and nowhere else): the build
// bundles it with @simplewebauthn/browser into static/passkeys.js. For each ceremony on the page (src/http/ceremony.tsx)
// it reveals the form when this browser can run one, and on submit asks svc for the options (posting the form token),
// runs the ceremony, puts the answer in the form's hidden field and submits the form as usual: svc verifies it and
// answers with a page or a redirect, as for any form. It reads nothing else from the page and sends nothing elsewhere.
import { browserSupportsWebAuthn, startAuthentication, startRegistration } from '@simplewebauthn/browser';

/** Words for a ceremony the browser ended without an answer (cancelled, timed out, no matching passkey). */
const NOT_USED = 'No passkey was used: the request was cancelled or timed out. Try again, or use another way.';
const NO_OPTIONS = 'The passkey request could not start. Reload the page and try again.';

function setUp(box: HTMLElement): void {
  const kind = box.dataset.ceremony;
  const optionsUrl = box.dataset.options;
  const available = box.querySelector<HTMLElement>('[data-available]');
  const unavailable = box.querySelector<HTMLElement>('[data-unavailable]');
  const form = available?.querySelector('form');
  const status = box.querySelector<HTMLElement>('[data-status]');
  const answer = form?.querySelector<HTMLInputElement>('input[name="answer"]');
  const button = form?.querySelector<HTMLButtonElement>('button[type="submit"]');
  if (!kind || !optionsUrl || !available || !form || !answer || !button || !status) return;
  if (!browserSupportsWebAuthn()) {
    if (unavailable) unavailable.textContent = 'This browser does not support passkeys. Use another way to continue.';
    return;
  }
  if (unavailable) unavailable.hidden = true;
  available.hidden = false;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void run();
  });

  async function run(): Promise<void> {
    button!.disabled = true;
    status!.textContent = 'Waiting for your passkey…';
    try {
      const body = new URLSearchParams();
      const csrf = form!.querySelector<HTMLInputElement>('input[name="_csrf"]');
      if (csrf) body.set('_csrf', csrf.value);
      const res = await fetch(optionsUrl!, { method: 'POST', body, headers: { accept: 'application/json' } });
      const data = (await res.json().catch(() => ({}))) as { options?: unknown; error?: string };
      if (!res.ok || !data.options) throw new Refused(data.error ?? NO_OPTIONS);
      let result: unknown;
      if (kind === 'register') {
        const created = await startRegistration({ optionsJSON: data.options as never });
        // svc reads the attestation object; the copies of its parts would only make the form larger.
        delete created.response.publicKey;
        delete created.response.authenticatorData;
        delete created.response.publicKeyAlgorithm;
        result = created;
      } else {
        result = await startAuthentication({ optionsJSON: data.options as never });
      }
      answer!.value = JSON.stringify(result);
      status!.textContent = 'Checking…';
      form!.submit();
    } catch (err) {
      status!.textContent = err instanceof Refused ? err.message : NOT_USED;
      button!.disabled = false;
    }
  }
}

/** A refusal from svc, shown in its own words. */
class Refused extends Error {}

for (const box of document.querySelectorAll<HTMLElement>('[data-ceremony]')) setUp(box);
