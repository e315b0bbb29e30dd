// The login view: shown whenever the API answers 401. The token goes into a POST body once; the server answers
// with a session in an HttpOnly cookie (never the token). Page scripts keep neither.
import { h, replace } from './dom.js';
import { api, errorText } from './api.js';
import { setTitle, stopPage } from './router.js';

let shown = false;

/** This server's address as the browser reached it: the `--url` that `svc login-link` needs (its default
 * names port 8000, which a server on another port does not answer). */
function serverUrl() {
  return `${location.origin}/`;
}

/** The command, run as the server's user, that prints a new login link to this server. */
export function loginLinkCommand() {
  return `svc login-link --url ${serverUrl()}`;
}

/**
 * Show the login view. `onLoggedIn` runs once the token was accepted (the shell passes its restart, so this
 * module needs nothing from it). The card names this server's own address and the command that prints a link to
 * it; the token is SVC_API_TOKEN's value or, when svc serve runs without it, the file it wrote in its state directory.
 */
export function showLogin(message = null, onLoggedIn = () => location.reload()) {
  if (shown) return;
  shown = true;
  stopPage();
  document.body.classList.add('logged-out');
  setTitle('Log in');
  const error = h('div', { class: 'alert alert-error', role: 'alert', hidden: !message }, message || '');
  const input = h('input', {
    type: 'password',
    id: 'login-token',
    name: 'token',
    autocomplete: 'off',
    required: true,
    placeholder: 'paste the token',
    spellcheck: 'false',
  });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Log in');
  const form = h(
    'form',
    {
      class: 'login-form',
      onSubmit: async (event) => {
        event.preventDefault();
        submit.disabled = true;
        error.hidden = true;
        try {
          await api('/api/auth/login', { method: 'POST', body: { token: input.value.trim() } });
          shown = false;
          onLoggedIn();
        } catch (err) {
          error.textContent = errorText(err);
          error.hidden = false;
          input.select();
        } finally {
          submit.disabled = false;
        }
      },
    },
    h('label', { htmlFor: 'login-token' }, 'API token'),
    h('div', { class: 'login-row' }, input, submit),
    error,
  );
  replace(
    document.getElementById('main'),
    h(
      'div',
      { class: 'login' },
      h(
        'div',
        { class: 'login-card card' },
        h('h2', null, 'Log in to svc'),
        h(
          'p',
          null,
          'When it starts on a terminal, ',
          h('code', null, 'svc serve'),
          ' prints a login link such as ',
          h('code', { class: 'login-example' }, `${serverUrl()}?login_code=…`),
          '. Open it within 10 minutes and this browser stays logged in for 30 days, until you log out.',
        ),
        h(
          'p',
          null,
          'For a new link, run this as the user who runs ',
          h('code', null, 'svc serve'),
          ':',
          h(
            'code',
            { class: 'login-command', style: { display: 'block', width: 'fit-content', whiteSpace: 'nowrap' } },
            loginLinkCommand(),
          ),
        ),
        h(
          'p',
          { class: 'muted login-token-source' },
          'Or paste the API token: the value of ',
          h('code', null, 'SVC_API_TOKEN'),
          ' if ',
          h('code', null, 'svc serve'),
          ' was started with it set; otherwise ',
          'the file ',
          h('code', null, 'svc/api-token'),
          ' that ',
          h('code', null, 'svc serve'),
          ' wrote in its state directory on its first start (',
          h('code', null, '$XDG_STATE_HOME'),
          ', by default ',
          h('code', null, '~/.local/state'),
          '), whose path it prints when started without a terminal.',
        ),
        form,
      ),
    ),
  );
  input.focus();
}
