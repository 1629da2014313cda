// Daguerre dashboard: progressive enhancement only. Every page works without this file except
// the Playground, which calls the API from the browser.
(function () {
  'use strict';

  var KEY_STORAGE = 'daguerre.playground.apiKey';
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
      if ($('#metadata').checked) list.push(['metadata', true]);
      if ($('#failOnBlank').checked) list.push(['failOnBlank', true]);
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
      var lines = ['curl -G ' + shellQuote(window.location.origin + '/capture'), '  -H "X-API-Key: $DAGUERRE_API_KEY"'];
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
        "import { createClient } from '@daguerre/client';",
        '',
        'const client = createClient({',
        '  baseUrl: ' + JSON.stringify(window.location.origin) + ',',
        '  apiKey: process.env.DAGUERRE_API_KEY!,',
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

    var CONTENT_FORMATS = ['html', 'markdown', 'text', 'mhtml'];
    var CONTENT_TYPES = { html: 'text/html;charset=utf-8', markdown: 'text/markdown;charset=utf-8', text: 'text/plain;charset=utf-8', mhtml: 'multipart/related' };

    /** The bytes of a data: URI's base64 payload (the JSON form's imageData). */
    function dataUriBlob(uri) {
      var comma = uri.indexOf(',');
      var binary = atob(uri.slice(comma + 1));
      var bytes = new Uint8Array(binary.length);
      for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
      return new Blob([bytes], { type: uri.slice(5, uri.indexOf(';')) });
    }

    function term(list, name, value) {
      if (value === null || value === undefined || value === '') return;
      var dt = document.createElement('dt');
      dt.textContent = name;
      var dd = document.createElement('dd');
      dd.textContent = String(value);
      list.appendChild(dt);
      list.appendChild(dd);
    }

    /**
     * The quality report and the metadata beside the result. Everything the page wrote (titles,
     * messages) goes in as text, never as markup.
     */
    function showInsight(quality, metadata, headerQuality) {
      var box = $('#pg-insight');
      var badge = $('#pg-quality');
      box.innerHTML = '';
      var ok = quality ? quality.ok : headerQuality.value === 'ok';
      badge.textContent = ok ? 'Quality: ok' : 'Quality: warn';
      var heading = document.createElement('p');
      heading.textContent = ok ? 'No quality problem found.' : 'Quality findings:';
      box.appendChild(heading);
      var findings = quality ? quality.findings : (headerQuality.findings ? headerQuality.findings.split(',').map(function (check) { return { check: check, message: '' }; }) : []);
      if (findings.length) {
        var list = document.createElement('ul');
        list.className = 'pg-findings';
        findings.forEach(function (finding) {
          var item = document.createElement('li');
          var check = document.createElement('strong');
          check.textContent = finding.check;
          item.appendChild(check);
          item.appendChild(document.createTextNode(finding.message ? ': ' + finding.message : ''));
          list.appendChild(item);
        });
        box.appendChild(list);
      }
      if (!metadata) return;
      var dl = document.createElement('dl');
      term(dl, 'Title', metadata.title);
      term(dl, 'Description', metadata.description);
      term(dl, 'Canonical URL', metadata.canonicalUrl);
      term(dl, 'Language', metadata.language);
      term(dl, 'HTTP status', metadata.httpStatus);
      Object.keys(metadata.openGraph || {}).forEach(function (name) {
        term(dl, 'og:' + name, metadata.openGraph[name]);
      });
      Object.keys(metadata.twitter || {}).forEach(function (name) {
        term(dl, 'twitter:' + name, metadata.twitter[name]);
      });
      term(dl, 'Icons', (metadata.icons || []).map(function (icon) { return icon.href; }).join(' '));
      term(dl, 'Fonts', (metadata.fonts || []).map(function (font) { return font.family + (font.webFont ? ' (web font)' : ''); }).join(', '));
      term(dl, 'Redirects', (metadata.redirects || []).map(function (hop) { return hop.status + ' ' + hop.url; }).join(' → '));
      term(dl, 'Console errors', metadata.consoleErrors.count + (metadata.consoleErrors.first.length ? ' (first: ' + metadata.consoleErrors.first[0].message + ')' : ''));
      term(dl, 'Failed requests', metadata.failedRequests.count + (metadata.failedRequests.first.length ? ' (first: ' + metadata.failedRequests.first[0].url + ', ' + metadata.failedRequests.first[0].reason + ')' : ''));
      var timings = metadata.timings;
      term(dl, 'Timings', 'navigation ' + timings.navigation + ' ms · load ' + (timings.load === null ? '–' : timings.load + ' ms') + ' · wait ' + timings.wait + ' ms · capture ' + timings.capture + ' ms');
      term(dl, 'SHA-256', metadata.sha256);
      box.appendChild(dl);
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
      // Everything but a pdf is fetched as JSON, so the quality report and metadata come with the file.
      var asJson = format !== 'pdf';
      var query = new URLSearchParams();
      list.forEach(function (pair) {
        query.set(pair[0], String(pair[1]));
      });
      if (asJson) query.set('returnFile', 'false');
      var html = source() === 'html' ? list[0][1] : '';
      // Large HTML goes as a JSON body, like the typed client does (URL length limits).
      var usePost = html.length > 4000;
      var body = {};
      list.forEach(function (pair) {
        body[pair[0]] = pair[1];
      });
      if (asJson) body.returnFile = false;
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
        var blob;
        var fileName;
        if (asJson) {
          var data = (await response.json()).data;
          blob = data.imageData
            ? dataUriBlob(data.imageData)
            : new Blob([data.content || ''], { type: CONTENT_TYPES[format] || 'text/plain' });
          fileName = data.fileName;
          showInsight(data.quality, data.metadata, null);
        } else {
          blob = await response.blob();
          fileName = fileNameOf(response, format);
          showInsight(null, null, { value: response.headers.get('x-capture-quality'), findings: response.headers.get('x-capture-quality-findings') });
        }
        objectUrl = URL.createObjectURL(blob);
        result.classList.remove('is-loading');
        statusLine.textContent =
          response.status +
          ' OK · ' +
          elapsed +
          ' · ' +
          formatBytes(blob.size) +
          (remaining !== null ? ' · ' + remaining + ' requests left in this window' : '');
        if (format === 'pdf') {
          showMessage('success', 'PDF ready.', fileName + ' (' + formatBytes(blob.size) + ')');
        } else if (CONTENT_FORMATS.indexOf(format) >= 0) {
          var pre = document.createElement('pre');
          pre.className = 'pg-content mono';
          pre.textContent = data.content.length > 20000 ? data.content.slice(0, 20000) + '\n…' : data.content;
          result.appendChild(pre);
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
