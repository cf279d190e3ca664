import { describe, it, expect } from 'vitest';
import { escapeControls, escapeJson, plainText, shown } from '../../src/util/terminal.js';

describe('terminal escaping', () => {
  it('escapes C0, DEL, C1, bidi and zero-width controls visibly; plain text and other Unicode untouched', () => {
    expect(escapeControls('a\x1b[31mb\x07c\x7f\u009b\u202e\u200bd\u2028')).toBe('a\\x1b[31mb\\x07c\\x7f\\x9b\\u202e\\u200bd\\u2028');
    expect(escapeControls('line\nnext\ttab\r')).toBe('line\\nnext\\ttab\\r');
    expect(escapeControls('line\nnext\ttab\r', { layout: true })).toBe('line\nnext\ttab\\r');
    expect(escapeControls('été 東京 ✓ docs.example.com')).toBe('été 東京 ✓ docs.example.com');
  });

  it('JSON keeps its value: C1 and bidi controls become \\u escapes', () => {
    const value = { d: 'a\u009bb\u202ec\x1b' };
    const text = escapeJson(JSON.stringify(value, null, 2));
    // eslint-disable-next-line no-control-regex -- matching control characters is the point (terminal escape injection)
    expect(text).not.toMatch(/[\u0080-\u009f\u202e\x1b]/);
    expect(JSON.parse(text)).toEqual(value);
  });

  it('plainText (what readers see of titles, snippets and queries): every bidi formatting character goes, implicit marks too', () => {
    expect(plainText('a\u200eb\u200fc\u061cd\u202ee\u2067f\x1bg')).toBe('abcdef g');
    expect(plainText('שלום עולם · مرحبا')).toBe('שלום עולם · مرحبا');
  });

  it('shown`...` escapes every interpolated value whole, newlines included, and keeps the template', () => {
    expect(shown`domain ${'x\ny'}\nnext ${42}`).toBe('domain x\\ny\nnext 42');
  });
});
