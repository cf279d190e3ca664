/**
 * Text bound for a terminal never carries control characters from data: a manifest's domain,
 * version or paths, an archive entry, an error from a server could otherwise move the cursor,
 * retitle the window, hide or reorder text (terminal escape sequences, carriage returns, bidi
 * overrides). Escaped, they stay visible: `\x1b`, `\r`, `\u202e`.
 *
 * Escaped: C0 controls and DEL, C1 controls (U+0080-U+009F: 8-bit CSI and friends), the Unicode
 * bidi controls and zero-width marks that reorder or hide text, and U+2028/U+2029.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point (terminal escape injection)
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;
// eslint-disable-next-line no-control-regex -- matching control characters is the point (terminal escape injection)
const CONTROLS_BUT_LAYOUT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\x1b': '\\x1b' };

function escapeOne(c: string): string {
  const code = c.charCodeAt(0);
  return NAMED[c] ?? (code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`);
}

/**
 * Escape control characters in text about to be printed. `layout: true` keeps newlines and tabs
 * (for whole messages, whose own line breaks are ours); values from data are escaped whole.
 */
export function escapeControls(text: string, o: { layout?: boolean } = {}): string {
  return text.replace(o.layout ? CONTROLS_BUT_LAYOUT : CONTROLS, escapeOne);
}

/** Text from data in double quotes, for a message: quotes and backslashes escaped, controls as escapeControls shows them (`\x1b`). */
export function quoted(text: string): string {
  return `"${escapeControls(text.replace(/["\\]/g, (c) => `\\${c}`))}"`;
}

/**
 * JSON for a terminal: JSON.stringify escapes C0 controls but leaves DEL, C1 and bidi controls
 * raw; those become \u escapes (still the same JSON value).
 */
export function escapeJson(json: string): string {
  return json.replace(CONTROLS_BUT_LAYOUT, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * A template tag for prose built from data: every interpolated value is escaped whole, newlines
 * included, so a value can never forge a line of output. `shown\`domain ${m.domain}\``.
 */
export function shown(strings: TemplateStringsArray, ...values: unknown[]): string {
  let out = strings[0]!;
  values.forEach((v, i) => {
    out += escapeControls(String(v)) + strings[i + 1]!;
  });
  return out;
}

// eslint-disable-next-line no-control-regex -- control characters are exactly what is removed
const C0_C1 = /[\u0000-\u001f\u007f-\u009f]/g;
/**
 * Text from a page as a reader sees it (a search result's title and snippet, the landing page):
 * control characters become spaces and bidirectional formatting characters go: overrides,
 * embeddings, isolates and the implicit marks (LRM, RLM, ALM). A title "gnp.exe" written
 * backwards is no title for a reader; text shown is isolated (`<bdi>`) where it is shown.
 */
export const plainText = (s: string): string => s.replace(C0_C1, ' ').replace(/[\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]/g, '');
