// Refdesk UI: small progressive enhancements over server-rendered forms (everything works
// without this file). No inline scripts: the CSP forbids them.
(function () {
  'use strict';
  // htmx requests carry the session's CSRF token as a header (forms also carry it as _csrf).
  document.addEventListener('htmx:configRequest', function (e) {
    var meta = document.querySelector('meta[name="csrf-token"]');
    if (meta) e.detail.headers['X-CSRF-Token'] = meta.getAttribute('content');
  });
  // Copy buttons: <button data-copy="#id"> copies the text of that element.
  document.addEventListener('click', function (e) {
    var btn = e.target.closest && e.target.closest('[data-copy]');
    if (!btn) return;
    var el = document.querySelector(btn.getAttribute('data-copy'));
    if (!el || !navigator.clipboard) return;
    navigator.clipboard.writeText(el.textContent || el.value || '').then(function () {
      btn.textContent = 'Copied';
    });
  });
  // Forms with data-confirm ask before submitting (the server checks again: a plain form without
  // JavaScript gets a confirmation page).
  document.addEventListener('submit', function (e) {
    var form = e.target;
    var q = form.getAttribute && form.getAttribute('data-confirm');
    if (!q) return;
    if (!window.confirm(q)) return e.preventDefault();
    // Confirmed here: tell the server, so it does not ask again with its confirmation page.
    if (!form.querySelector('input[name="confirmed"]')) {
      var c = document.createElement('input');
      c.type = 'hidden'; c.name = 'confirmed'; c.value = '1';
      form.appendChild(c);
    }
  }, true);
})();
