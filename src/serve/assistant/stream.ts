/**
 * The assistant panel's reader of the answer (part of `/_airlock/assistant.js`, ES5): the AI SDK
 * v5 UI message stream the local-assistant endpoint sends (`data: {json}` events, `data: [DONE]`
 * last), read with fetch's ReadableStream reader and a TextDecoder, no library. Defines
 * `readParts(res, onPart)` (a promise that settles at the end of the stream) and
 * `refusal(res, body)` (the reader's sentence for a non-200 answer) in the script's scope.
 */
export const STREAM = String.raw`
  function readParts(res, onPart) {
    var reader = res.body.getReader(), decoder = new TextDecoder(), buf = '';
    function event(block) {
      var data = block.split('\n').filter(function (l) { return l.indexOf('data:') === 0; })
        .map(function (l) { return l.slice(5).replace(/^ /, ''); }).join('\n');
      if (!data || data === '[DONE]') return;
      var part;
      try { part = JSON.parse(data); } catch (e) { return; }
      if (part && typeof part.type === 'string') onPart(part);
    }
    function drain(end) {
      buf = buf.replace(/\r\n/g, '\n');
      var i;
      while ((i = buf.indexOf('\n\n')) >= 0) { event(buf.slice(0, i)); buf = buf.slice(i + 2); }
      if (end && buf.trim()) { event(buf); buf = ''; }
    }
    function pump() {
      return reader.read().then(function (r) {
        if (r.done) { buf += decoder.decode(); drain(true); return; }
        buf += decoder.decode(r.value, { stream: true });
        drain(false);
        return pump();
      });
    }
    return pump();
  }
  function later(seconds) {
    var s = Math.max(1, Math.round(Number(seconds) || 0));
    if (!seconds) return 'later';
    return s < 90 ? 'in ' + s + (s === 1 ? ' second' : ' seconds') : 'in ' + Math.round(s / 60) + ' minutes';
  }
  function refusal(res, body) {
    var why = body && typeof body.error === 'string' ? body.error.slice(0, 300) : '';
    var when = later(res.headers.get('retry-after'));
    if (res.status === 429) return 'Too many questions for now' + (why ? ' (' + why + ')' : '') + '. Please ask again ' + when + '.';
    if (res.status === 503) return (why ? why.charAt(0).toUpperCase() + why.slice(1).replace(/[.;]\s*$/, '') : 'The assistant cannot answer right now') + '. Please ask again ' + when + '.';
    return 'The assistant is unavailable (HTTP ' + res.status + ')' + (why ? ': ' + why : '') + '.';
  }
`;
