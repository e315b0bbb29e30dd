// The login view: shown whenever the API answers 401. The token goes into a POST body once; the server answers
// with a session in an HttpOnly cookie (never the token). Page scripts keep neither.
import { h, replace } from './dom.js';
import { api, errorText } from './api.js';
import { setTitle } from './router.js';

let shown = false;

export function showLogin(message = null) {
  if (shown) return;
  shown = true;
  import('./router.js').then((router) => router.stopPage());
  document.body.classList.add('logged-out');
  setTitle('Log in');
  const error = h('div', { class: 'alert alert-error', role: 'alert', hidden: !message }, message || '');
  const input = h('input', { type: 'password', id: 'login-token', name: 'token', autocomplete: 'off', required: true, placeholder: 'paste the token', spellcheck: 'false' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Log in');
  const form = h('form', {
    class: 'login-form',
    onSubmit: async (event) => {
      event.preventDefault();
      submit.disabled = true;
      error.hidden = true;
      try {
        await api('/api/auth/login', { method: 'POST', body: { token: input.value.trim() } });
        shown = false;
        const { restart } = await import('./app.js');
        restart();
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
  error);
  replace(document.getElementById('main'),
    h('div', { class: 'login' },
      h('div', { class: 'login-card card' },
        h('h2', null, 'Log in to svc'),
        h('p', null, 'When it starts, ', h('code', null, 'svc serve'), ' prints a login link such as ',
          h('code', null, 'http://127.0.0.1:8000/?login_code=…'), '. Open it within 10 minutes (', h('code', null, 'svc login-link'), ' prints a new one) and this browser stays logged in for 30 days, until you log out.'),
        h('p', { class: 'muted' }, 'Or paste the token here: it is the value of ', h('code', null, 'SVC_API_TOKEN'),
          ', or the contents of ', h('code', null, '~/.local/state/svc/api-token'), ' on the server.'),
        form)));
  input.focus();
}
