// Rendershot dashboard: progressive enhancement only. Every page works without this file except
// the Playground, which calls the API from the browser.
(function () {
  'use strict';

  var KEY_STORAGE = 'rendershot.playground.apiKey';
  document.documentElement.classList.add('js');

  function $(selector, root) {
    return (root || document).querySelector(selector);
  }
  function $all(selector, root) {
    return Array.prototype.slice.call((root || document).querySelectorAll(selector));
  }
  function storage() {
    try {
      return window.sessionStorage;
    } catch {
      return null;
    }
  }

  // Times are rendered in UTC on the server; show them in the reader's time zone.
  function localTimes() {
    var date = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', year: 'numeric' });
    var dateTime = new Intl.DateTimeFormat(undefined, {
      day: 'numeric',
      month: 'short',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
    });
    $all('time[data-local]').forEach(function (el) {
      var value = new Date(el.getAttribute('datetime'));
      if (isNaN(value.getTime())) return;
      el.textContent = (el.getAttribute('data-local') === 'date' ? date : dateTime).format(value);
    });
  }

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    return new Promise(function (resolve, reject) {
      var area = document.createElement('textarea');
      area.value = text;
      area.setAttribute('readonly', '');
      area.className = 'visually-hidden';
      document.body.appendChild(area);
      area.select();
      var ok = false;
      try {
        ok = document.execCommand('copy');
      } catch {
        ok = false;
      }
      document.body.removeChild(area);
      if (ok) resolve();
      else reject(new Error('copy failed'));
    });
  }

  function copyButtons() {
    document.addEventListener('click', function (event) {
      var button = event.target.closest('[data-copy]');
      if (!button) return;
      var source = $(button.getAttribute('data-copy'));
      if (!source) return;
      var text = 'value' in source && source.tagName !== 'CODE' ? source.value : source.textContent;
      var label = button.querySelector('span') || button;
      var original = label.textContent;
      copyText(text).then(
        function () {
          label.textContent = 'Copied';
          if (source.select) source.select();
          setTimeout(function () {
            label.textContent = original;
          }, 2000);
        },
        function () {
          if (source.select) source.select();
          label.textContent = 'Press Ctrl+C';
        },
      );
    });
  }

  function useKeyButtons() {
    $all('[data-use-key]').forEach(function (button) {
      button.addEventListener('click', function () {
        var source = $(button.getAttribute('data-use-key'));
        var store = storage();
        if (source && store) store.setItem(KEY_STORAGE, source.value);
        window.location.href = '/dashboard/playground';
      });
    });
  }

  // Forms: the organization switcher submits on change; submit buttons show progress and cannot
  // be pressed twice (a second "Create key" would create a second key).
  function forms() {
    $all('form[data-autosubmit] select').forEach(function (select) {
      select.addEventListener('change', function () {
        select.form.submit();
      });
    });
    // Coming back with the Back button restores the page as it was left: re-enable its buttons.
    window.addEventListener('pageshow', function (event) {
      if (!event.persisted) return;
      $all('button[aria-busy="true"]').forEach(function (button) {
        button.disabled = false;
        button.removeAttribute('aria-busy');
      });
    });
    $all('form[method="post"]').forEach(function (form) {
      form.addEventListener('submit', function () {
        var button = form.querySelector('button[type="submit"]');
        if (!button) return;
        setTimeout(function () {
          button.disabled = true;
          button.setAttribute('aria-busy', 'true');
          if (/test connection/i.test(button.textContent)) button.textContent = 'Testing…';
        }, 0);
      });
    });
  }

  // ---------------- Playground ----------------

  function playground() {
    var form = $('#playground-form');
    if (!form) return;
    var keyInput = $('#pg-key');
    var result = $('#pg-result');
    var statusLine = $('#pg-status');
    var submit = $('#pg-submit');
    var store = storage();
    var objectUrl = null;

    if (store && store.getItem(KEY_STORAGE)) keyInput.value = store.getItem(KEY_STORAGE);
    keyInput.addEventListener('input', function () {
      if (!store) return;
      if (keyInput.value) store.setItem(KEY_STORAGE, keyInput.value.trim());
      else store.removeItem(KEY_STORAGE);
    });
    $('#pg-key-forget').addEventListener('click', function () {
      keyInput.value = '';
      if (store) store.removeItem(KEY_STORAGE);
      keyInput.focus();
    });

    function source() {
      return form.querySelector('input[name="source"]:checked').value;
    }

    function syncVisibility() {
      var current = source();
      $all('[data-source]', form).forEach(function (el) {
        el.hidden = el.getAttribute('data-source') !== current;
      });
      var format = $('#format').value;
      $all('[data-format]', form).forEach(function (el) {
        el.hidden = el.getAttribute('data-format').split(' ').indexOf(format) < 0;
      });
      // The service always captures PDFs full page.
      $('#fullPage').disabled = format === 'pdf';
    }

    /** The request's parameters, without defaults, in the order a person would write them. */
    function params() {
      var list = [];
      var current = source();
      if (current === 'url') list.push(['url', $('#pg-url').value.trim()]);
      else list.push(['html', $('#pg-html').value]);
      return list.concat(options());
    }

    /** For the snippets: an empty source shows an example instead of `url=`. */
    function snippetParams() {
      var list = params();
      if (!list[0][1]) list[0] = [list[0][0], list[0][0] === 'url' ? 'https://example.com' : '<h1>Hello</h1>'];
      return list;
    }

    function options() {
      var list = [];
      var format = $('#format').value;
      if (format !== 'png') list.push(['format', format]);
      if ((format === 'jpeg' || format === 'webp') && $('#imageQuality').value)
        list.push(['imageQuality', Number($('#imageQuality').value)]);
      if ($('#device').value !== 'desktop') list.push(['device', $('#device').value]);
      ['viewportWidth', 'viewportHeight', 'delay'].forEach(function (name) {
        var value = $('#' + name).value;
        if (value !== '' && !(name === 'delay' && Number(value) === 0)) list.push([name, Number(value)]);
      });
      if ($('#fullPage').checked && format !== 'pdf') list.push(['fullPage', true]);
      if ($('#theme').value !== 'auto') list.push(['theme', $('#theme').value]);
      if ($('#waitUntil').value !== 'load') list.push(['waitUntil', $('#waitUntil').value]);
      if ($('#waitForSelector').value.trim()) list.push(['waitForSelector', $('#waitForSelector').value.trim()]);
      ['hideSelectors', 'styles', 'timezone', 'locale', 'mediaType'].forEach(function (name) {
        var value = $('#' + name).value.trim();
        if (value) list.push([name, value]);
      });
      ['scripts', 'click', 'scrollIntoView'].forEach(function (name) {
        var value = $('#' + name).value.trim();
        if (value) list.push([name, value]);
      });
      if (format === 'pdf') pdfOptions(list);
      if ($('#reducedMotion').checked) list.push(['reducedMotion', true]);
      if ($('#failOnHttpError').checked) list.push(['failOnHttpError', true]);
      if ($('#removeCookieBanners').checked) list.push(['removeCookieBanners', true]);
      if ($('#removeAds').checked) list.push(['removeAds', true]);
      return list;
    }

    /** The pdf options that differ from their defaults (the server refuses the paginated ones with the single layout). */
    function pdfOptions(list) {
      var single = $('#pdfPageLayout').value === 'single';
      if (single) list.push(['pdfPageLayout', 'single']);
      if (!$('#pdfPrintBackground').checked) list.push(['pdfPrintBackground', false]);
      if (single) return;
      if ($('#pdfFormat').value !== 'A4') list.push(['pdfFormat', $('#pdfFormat').value]);
      if ($('#pdfLandscape').checked) list.push(['pdfLandscape', true]);
      if ($('#pdfScale').value !== '' && Number($('#pdfScale').value) !== 1) list.push(['pdfScale', Number($('#pdfScale').value)]);
      ['pdfMargin', 'pdfPageRanges', 'pdfHeaderTemplate', 'pdfFooterTemplate'].forEach(function (name) {
        var value = $('#' + name).value.trim();
        if (value) list.push([name, value]);
      });
      if ($('#pdfPreferCssPageSize').checked) list.push(['pdfPreferCssPageSize', true]);
    }

    function shellQuote(text) {
      return "'" + String(text).replace(/'/g, "'\\''") + "'";
    }

    function extension(format) {
      return format === 'jpeg' ? 'jpg' : format;
    }

    function curlSnippet(list) {
      var format = $('#format').value || 'png';
      var lines = ['curl -G ' + shellQuote(window.location.origin + '/capture'), '  -H "X-API-Key: $RENDERSHOT_API_KEY"'];
      list.forEach(function (pair) {
        var value = String(pair[1]);
        var plain = /^[\w.:-]*$/.test(value);
        lines.push(plain ? '  -d ' + pair[0] + '=' + value : '  --data-urlencode ' + shellQuote(pair[0] + '=' + value));
      });
      lines.push('  -o capture.' + extension(format));
      return lines.join(' \\\n');
    }

    function tsSnippet(list) {
      var body = list
        .map(function (pair) {
          return '  ' + pair[0] + ': ' + (typeof pair[1] === 'string' ? JSON.stringify(pair[1]) : String(pair[1])) + ',';
        })
        .join('\n');
      return [
        "import { writeFile } from 'node:fs/promises';",
        "import { createClient } from '@rendershot/client';",
        '',
        'const client = createClient({',
        '  baseUrl: ' + JSON.stringify(window.location.origin) + ',',
        '  apiKey: process.env.RENDERSHOT_API_KEY!,',
        '});',
        '',
        'const file = await client.capture({',
        body,
        '});',
        'await writeFile(file.fileName, file.bytes);',
      ].join('\n');
    }

    function renderSnippets() {
      var list = snippetParams();
      $('#pg-curl').textContent = curlSnippet(list);
      $('#pg-ts').textContent = tsSnippet(list);
      scheduleSignedLink();
    }

    // The signed link is signed by the server with the chosen key's secret (the secret never comes here).
    var signedTimer = null;
    var signedRequest = 0;
    function scheduleSignedLink() {
      if (!$('#pg-signed-key') || !$('#pg-signed-key').value) return;
      clearTimeout(signedTimer);
      signedTimer = setTimeout(signedLink, 250);
    }
    async function signedLink() {
      var output = $('#pg-signed-url');
      var list = params();
      if (!list[0][1]) {
        output.textContent = 'Enter a URL or HTML to make a signed link.';
        return;
      }
      var query = new URLSearchParams();
      list.forEach(function (pair) {
        query.append(pair[0], String(pair[1]));
      });
      var body = new URLSearchParams();
      body.set('_csrf', $('#pg-signed-csrf input[name="_csrf"]').value);
      body.set('keyId', $('#pg-signed-key').value);
      body.set('expiresIn', $('#pg-signed-expires').value);
      body.set('query', query.toString());
      var current = ++signedRequest;
      try {
        var response = await fetch(window.location.pathname.replace(/\/playground$/, '/playground/signed-link'), {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: body.toString(),
          credentials: 'same-origin',
        });
        var answer = await response.json();
        if (current !== signedRequest) return;
        output.textContent = answer.url ? window.location.origin + answer.url : answer.error || 'The link could not be made.';
        output.setAttribute('data-ready', answer.url ? 'true' : 'false');
      } catch (error) {
        if (current === signedRequest) output.textContent = 'The link could not be made: ' + error.message;
      }
    }
    ['#pg-signed-key', '#pg-signed-expires'].forEach(function (selector) {
      if ($(selector)) $(selector).addEventListener('change', scheduleSignedLink);
    });

    function formatBytes(bytes) {
      if (bytes < 1024) return bytes + ' B';
      if (bytes < 1024 * 1024) return (bytes / 1024).toFixed(1) + ' KB';
      return (bytes / 1024 / 1024).toFixed(1) + ' MB';
    }

    function showMessage(kind, title, text) {
      result.classList.remove('is-loading');
      result.innerHTML = '';
      var box = document.createElement('div');
      box.className = 'alert alert-' + kind;
      box.setAttribute('role', kind === 'error' ? 'alert' : 'status');
      var inner = document.createElement('div');
      var strong = document.createElement('strong');
      strong.textContent = title;
      inner.appendChild(strong);
      inner.appendChild(document.createTextNode(' ' + text));
      box.appendChild(inner);
      result.appendChild(box);
    }

    function link(href, text, download) {
      var a = document.createElement('a');
      a.className = 'button button-small';
      a.href = href;
      a.textContent = text;
      if (download) a.download = download;
      else a.target = '_blank';
      a.rel = 'noopener';
      return a;
    }

    function fileNameOf(response, format) {
      var disposition = response.headers.get('content-disposition') || '';
      var match = /filename="([^"]+)"/.exec(disposition);
      return match ? match[1] : 'capture.' + extension(format);
    }

    async function capture(event) {
      event.preventDefault();
      var key = keyInput.value.trim();
      var list = params();
      if (!key) {
        showMessage('error', 'No API key.', 'Paste one of your keys in the field above (create one on the API keys page).');
        keyInput.focus();
        return;
      }
      if (!list[0][1]) {
        showMessage('error', 'Nothing to capture.', source() === 'url' ? 'Enter the URL of a web page.' : 'Enter some HTML.');
        (source() === 'url' ? $('#pg-url') : $('#pg-html')).focus();
        return;
      }
      var format = $('#format').value;
      var query = new URLSearchParams();
      list.forEach(function (pair) {
        query.set(pair[0], String(pair[1]));
      });
      var html = source() === 'html' ? list[0][1] : '';
      // Large HTML goes as a JSON body, like the typed client does (URL length limits).
      var usePost = html.length > 4000;
      var body = {};
      list.forEach(function (pair) {
        body[pair[0]] = pair[1];
      });
      submit.disabled = true;
      submit.setAttribute('aria-busy', 'true');
      submit.textContent = 'Capturing…';
      statusLine.textContent = '';
      result.innerHTML = '';
      result.classList.add('is-loading');
      if (objectUrl) URL.revokeObjectURL(objectUrl);
      objectUrl = null;
      var started = performance.now();
      try {
        var response = await fetch(
          usePost ? '/capture' : '/capture?' + query.toString(),
          usePost
            ? { method: 'POST', headers: { 'X-API-Key': key, 'Content-Type': 'application/json' }, body: JSON.stringify(body) }
            : { headers: { 'X-API-Key': key } },
        );
        var elapsed = ((performance.now() - started) / 1000).toFixed(2) + ' s';
        var remaining = response.headers.get('x-ratelimit-remaining');
        if (!response.ok) {
          var text = await response.text();
          var message = text;
          var code = 'HTTP ' + response.status;
          try {
            var parsed = JSON.parse(text);
            code = response.status + ' ' + parsed.error.code;
            message = parsed.error.message;
            if (Array.isArray(parsed.error.details)) {
              message +=
                ' ' +
                parsed.error.details
                  .map(function (d) {
                    return d.field + ': ' + d.message;
                  })
                  .join('; ');
            }
          } catch {
            /* not JSON: show the text */
          }
          statusLine.textContent = code + ' · ' + elapsed;
          showMessage('error', code + '.', message);
          return;
        }
        var blob = await response.blob();
        objectUrl = URL.createObjectURL(blob);
        result.classList.remove('is-loading');
        var fileName = fileNameOf(response, format);
        statusLine.textContent =
          response.status +
          ' OK · ' +
          elapsed +
          ' · ' +
          formatBytes(blob.size) +
          (remaining !== null ? ' · ' + remaining + ' requests left in this window' : '');
        if (format === 'pdf') {
          showMessage('success', 'PDF ready.', fileName + ' (' + formatBytes(blob.size) + ')');
        } else {
          var img = document.createElement('img');
          img.src = objectUrl;
          img.alt = 'Capture of ' + (source() === 'url' ? list[0][1] : 'the HTML');
          result.appendChild(img);
        }
        var links = document.createElement('div');
        links.className = 'pg-links';
        links.appendChild(link(objectUrl, 'Open', null));
        links.appendChild(link(objectUrl, 'Download', fileName));
        result.appendChild(links);
      } catch (error) {
        statusLine.textContent = '';
        showMessage('error', 'Request failed.', String(error && error.message ? error.message : error));
      } finally {
        submit.disabled = false;
        submit.removeAttribute('aria-busy');
        submit.textContent = 'Capture';
      }
    }

    form.addEventListener('input', function () {
      syncVisibility();
      renderSnippets();
    });
    form.addEventListener('change', function () {
      syncVisibility();
      renderSnippets();
    });
    form.addEventListener('submit', capture);
    syncVisibility();
    renderSnippets();

    // Tabs (curl / TypeScript) with arrow-key navigation.
    var tabs = $all('[role="tab"]');
    function select(tab) {
      tabs.forEach(function (t) {
        var selected = t === tab;
        t.setAttribute('aria-selected', String(selected));
        t.tabIndex = selected ? 0 : -1;
        $('#' + t.getAttribute('aria-controls')).hidden = !selected;
      });
    }
    tabs.forEach(function (tab, i) {
      tab.addEventListener('click', function () {
        select(tab);
      });
      tab.addEventListener('keydown', function (event) {
        if (event.key !== 'ArrowRight' && event.key !== 'ArrowLeft') return;
        var next = tabs[(i + (event.key === 'ArrowRight' ? 1 : tabs.length - 1)) % tabs.length];
        select(next);
        next.focus();
      });
    });
  }

  function start() {
    localTimes();
    copyButtons();
    useKeyButtons();
    forms();
    playground();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
