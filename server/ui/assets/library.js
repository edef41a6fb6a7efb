// Refdesk UI, library page (/libraries/{id}): follows a running job live through the jobs API's
// Server-Sent Events (GET /api/jobs/{id}/events: events state, progress, log, end, each with a
// JSON body), and completes the Delete form once its confirmation (app.js, data-confirm) was
// accepted. Everything from the server is put in as text, never as markup. Without this file the
// page still works: the log shows what was written when it loaded, and Delete asks on a page.
(function () {
  'use strict';

  // The summary (state, versions, jobs) reloads itself on this event (its hx-trigger).
  function changed() {
    document.body.dispatchEvent(new CustomEvent('job-changed', { bubbles: true }));
  }

  function follow(panel) {
    var url = panel.getAttribute('data-events-url');
    if (!url || !window.EventSource || panel.refdeskFollowing) return;
    panel.refdeskFollowing = true;
    var log = panel.querySelector('[data-job-log]');
    var stateEl = panel.querySelector('[data-job-state]');
    var stageEl = panel.querySelector('[data-job-stage]');
    var countsEl = panel.querySelector('[data-job-counts]');
    var errorEl = panel.querySelector('[data-job-error]');
    var bar = panel.querySelector('progress');
    var status = document.getElementById('job-status');
    var lastSeq = 0;
    if (log) {
      var items = log.querySelectorAll('li[data-seq]');
      if (items.length) lastSeq = Number(items[items.length - 1].getAttribute('data-seq')) || 0;
    }

    function setState(state) {
      if (!stateEl || !state) return;
      stateEl.textContent = state;
      stateEl.className = 'state state-' + String(state).replace(/[^a-z_-]/gi, '');
    }
    function setText(el, text) {
      if (el && text !== undefined && text !== null) el.textContent = String(text);
    }
    function announce(text) {
      setText(status, text);
    }
    function nearBottom() {
      return log.scrollHeight - log.scrollTop - log.clientHeight < 40;
    }
    function addLine(entry) {
      if (!log || typeof entry.seq !== 'number' || entry.seq <= lastSeq) return;
      lastSeq = entry.seq;
      var stick = nearBottom();
      var li = document.createElement('li');
      li.className = 'lvl-' + String(entry.level || 'info').replace(/[^a-z]/gi, '');
      li.setAttribute('data-seq', String(entry.seq));
      var time = document.createElement('time');
      time.setAttribute('datetime', String(entry.at || ''));
      time.textContent = String(entry.at || '').slice(11, 19);
      var stage = document.createElement('span');
      stage.className = 'log-stage';
      stage.textContent = String(entry.stage || '');
      var msg = document.createElement('span');
      msg.className = 'log-msg';
      msg.textContent = String(entry.message || '');
      li.append(time, ' ', stage, ' ', msg);
      log.appendChild(li);
      if (stick) log.scrollTop = log.scrollHeight;
    }
    function data(e) {
      try {
        return JSON.parse(e.data);
      } catch (err) {
        return null;
      }
    }

    var source = new EventSource(url);
    source.addEventListener('state', function (e) {
      var job = data(e);
      if (!job) return;
      setState(job.state);
      setText(stageEl, job.stage);
    });
    source.addEventListener('progress', function (e) {
      var p = data(e);
      if (!p) return;
      var total = typeof p.documentsTotal === 'number' && p.documentsTotal > 0 ? p.documentsTotal : null;
      setText(countsEl, p.documents + (total ? ' of ' + total : '') + ' documents, ' + p.snippets + ' snippets');
      if (bar && total) {
        bar.max = total;
        bar.value = Math.min(p.documents, total);
      }
    });
    source.addEventListener('log', function (e) {
      var entry = data(e);
      if (!entry) return;
      addLine(entry);
      if (entry.stage) setText(stageEl, entry.stage);
    });
    source.addEventListener('end', function (e) {
      source.close();
      var end = data(e) || {};
      setState(end.state);
      setText(stageEl, end.state === 'succeeded' ? 'done' : end.state);
      setText(panel.querySelector('[data-job-title]'), 'Last job');
      if (bar) {
        bar.max = 1;
        bar.value = end.state === 'succeeded' ? 1 : 0;
      }
      if (end.error && errorEl) {
        errorEl.textContent = String(end.error.message || end.error.code || 'failed');
        errorEl.hidden = false;
      }
      announce(
        end.state === 'deleted'
          ? 'The job is gone: the library was deleted.'
          : 'Job ' + end.state + (end.libraryState ? '; the library is ' + end.libraryState + '.' : '.'),
      );
      panel.removeAttribute('data-events-url');
      changed();
    });
    source.addEventListener('error', function () {
      if (source.readyState === EventSource.CLOSED) announce('Live updates stopped: reload the page to see the job.');
    });
  }

  // Delete: once the confirmation naming the library was accepted, the form carries the ID as
  // its confirmation (without JavaScript the server asks for it on a page instead).
  document.addEventListener('submit', function (e) {
    var form = e.target;
    if (e.defaultPrevented || !form.getAttribute || !form.hasAttribute('data-delete-library')) return;
    var field = form.querySelector('input[name="confirm"]');
    if (field) field.value = form.getAttribute('data-delete-library');
  });

  function start() {
    var panels = document.querySelectorAll('[data-events-url]');
    for (var i = 0; i < panels.length; i++) follow(panels[i]);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
  // A newer job swapped in by the page's watch (htmx): follow it, and refresh the summary.
  document.addEventListener('htmx:load', function (e) {
    if (!e.target || e.target.id !== 'job') return;
    start();
    changed();
  });
})();
