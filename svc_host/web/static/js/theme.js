// Runs before the first paint: the remembered theme, else the system's (prefers-color-scheme).
(() => {
  var stored = null;
  try {
    stored = localStorage.getItem('svc-theme');
  } catch {
    /* storage disabled */
  }
  var dark = stored ? stored === 'dark' : window.matchMedia('(prefers-color-scheme: dark)').matches;
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
})();
