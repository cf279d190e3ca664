/**
 * The assistant panel's Markdown renderer (part of `/_airlock/assistant.js`, ES5 like the rest of
 * it): the model's answer becomes DOM nodes built with createElement and textContent only, never
 * innerHTML, so whatever markup the model writes stays text. It knows paragraphs, `inline code`,
 * fenced code blocks, **bold**, bullet and numbered lists and [text](url) links; a link becomes an
 * `<a>` only when it resolves to this origin (`sameOrigin`), else it is shown as plain text.
 * Defines `sameOrigin(href)` and `markdown(text)` (a DocumentFragment) in the script's scope.
 */
export const MARKDOWN = String.raw`
  // The href as an absolute URL of this origin (http/https), or null: javascript:, data: and other origins never become links.
  function sameOrigin(href) {
    try {
      var u = new URL(String(href), location.href);
      return u.origin === location.origin && (u.protocol === 'http:' || u.protocol === 'https:') ? u.href : null;
    } catch (e) { return null; }
  }
  function node(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text) e.textContent = text;
    return e;
  }
  // inline code, **bold**, [text](url); each bounded, so a line of a thousand unclosed [ costs no more than its length times the bound
  var INLINE = /\x60([^\x60\n]{1,500})\x60|\*\*([^*\n]{1,500}?)\*\*|\[([^\]\n]{1,300})\]\(([^()\s]{1,2000})\)/g;
  function inline(text, into) {
    var at = 0, m, found = [];
    INLINE.lastIndex = 0;
    while ((m = INLINE.exec(text))) found.push(m); // all first: bold text is parsed again with the same regex
    found.forEach(function (m) {
      if (m.index > at) into.appendChild(document.createTextNode(text.slice(at, m.index)));
      at = m.index + m[0].length;
      if (m[1] !== undefined) into.appendChild(node('code', '', m[1]));
      else if (m[2] !== undefined) { var b = node('strong'); inline(m[2], b); into.appendChild(b); }
      else {
        var href = sameOrigin(m[4]);
        if (href) { var a = node('a', '', m[3]); a.href = href; into.appendChild(a); }
        else into.appendChild(document.createTextNode(m[3] + ' (' + m[4] + ')'));
      }
    });
    if (at < text.length) into.appendChild(document.createTextNode(text.slice(at)));
    return into;
  }
  var FENCE = /^\s*(\x60{3}|~~~)/, BULLET = /^\s*[-*+]\s+(.*)$/, NUMBER = /^\s*\d{1,3}[.)]\s+(.*)$/, HEADING = /^\s*#{1,6}\s+(.*)$/;
  function markdown(text) {
    var out = document.createDocumentFragment();
    var lines = String(text).replace(/\r\n?/g, '\n').split('\n');
    var para = [], list = null, listRe = null, i = 0;
    function endPara() { if (para.length) out.appendChild(inline(para.join(' '), node('p'))); para = []; }
    function endList() { list = null; listRe = null; }
    while (i < lines.length) {
      var line = lines[i], m;
      if ((m = FENCE.exec(line))) {
        endPara(); endList();
        var fence = m[1], code = [];
        for (i++; i < lines.length && lines[i].trim().indexOf(fence) !== 0; i++) code.push(lines[i]);
        i++;
        var pre = node('pre');
        pre.appendChild(node('code', '', code.join('\n')));
        out.appendChild(pre);
        continue;
      }
      var bullet = BULLET.exec(line), number = bullet ? null : NUMBER.exec(line);
      if (bullet || number) {
        endPara();
        var re = bullet ? BULLET : NUMBER;
        if (listRe !== re) { list = node(bullet ? 'ul' : 'ol'); listRe = re; out.appendChild(list); }
        list.appendChild(inline((bullet || number)[1], node('li')));
      } else if (!line.trim()) { endPara(); endList(); }
      else if ((m = HEADING.exec(line))) {
        endPara(); endList();
        var h = node('p', 'airlock-assistant-heading');
        h.appendChild(inline(m[1], node('strong')));
        out.appendChild(h);
      } else { endList(); para.push(line.trim()); }
      i++;
    }
    endPara();
    return out;
  }
`;
