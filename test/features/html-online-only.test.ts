import { describe, expect, it } from 'vitest';
import { resolveFeatures, transformHtmlDetailed } from '../../src/features/index.js';
import { embedLink } from '../../src/features/html-online-only.js';

/** Air-gapped: a widget that can only work online becomes a plain link, never an empty box. */
const AIR = resolveFeatures({ deployment: 'air-gapped' });
const CLOUD = resolveFeatures({ deployment: 'cloud' });
const air = async (html: string) =>
  transformHtmlDetailed(`<!DOCTYPE html><html><head><title>t</title></head><body>${html}</body></html>`, {
    features: AIR.features,
    deployment: AIR.deployment,
  });
const cloud = async (html: string) => (await transformHtmlDetailed(html, { features: CLOUD.features, deployment: CLOUD.deployment })).html.toString();

const MD_SOURCE =
  '<a href="https://github.com/acme/widgets" title="Go to repository" class="md-source" data-md-component="source">' +
  '<div class="md-source__icon md-icon"><svg viewBox="0 0 1 1"></svg></div><div class="md-source__repository">acme/widgets</div></a>';

describe('MkDocs Material repository widget', () => {
  it('stays a plain link to the repository with its name; what makes the theme fetch stars and forks from api.github.com goes', async () => {
    const r = await air(MD_SOURCE);
    const out = r.html.toString();
    expect(out).toContain('<a href="https://github.com/acme/widgets" title="Go to repository" class="md-source">');
    expect(out).toContain('<div class="md-source__repository">acme/widgets</div>');
    expect(out).not.toContain('data-md-component="source"');
    expect(r.removed['online-only-widget']).toBe(1);
  });

  it('other deployments keep it as the theme wrote it', async () => {
    expect(await cloud(MD_SOURCE)).toContain('data-md-component="source"');
  });
});

describe('video and map embeds become a link to the same content with its title', () => {
  const cases: Array<[string, string, string]> = [
    [
      '<iframe src="https://www.youtube.com/embed/dQw4w9WgXcQ?start=10" title="Install tour"></iframe>',
      'https://www.youtube.com/watch?v=dQw4w9WgXcQ',
      'Install tour',
    ],
    [
      '<iframe src="https://www.youtube-nocookie.com/embed/abc_DEF-12" title="Privacy tour"></iframe>',
      'https://www.youtube.com/watch?v=abc_DEF-12',
      'Privacy tour',
    ],
    ['<iframe src="//player.vimeo.com/video/76979871?h=8272103f6e" title="Keynote"></iframe>', 'https://vimeo.com/76979871', 'Keynote'],
    ['<iframe src="https://www.google.com/maps/embed?pb=!1m18!1m12" title="Office"></iframe>', 'https://www.google.com/maps/embed?pb=!1m18!1m12', 'Office'],
    [
      '<iframe src="https://www.google.com/maps/embed/v1/place?key=K&amp;q=Eiffel+Tower"></iframe>',
      'https://www.google.com/maps/search/?api=1&amp;query=Eiffel%20Tower',
      'Map on Google Maps',
    ],
    ['<iframe src="https://www.youtube.com/embed/xyz"></iframe>', 'https://www.youtube.com/watch?v=xyz', 'Video on YouTube'],
  ];
  for (const [html, href, title] of cases) {
    it(`${html.slice(13, 60)}…`, async () => {
      const r = await air(html);
      const out = r.html.toString();
      expect(out).not.toContain('<iframe');
      expect(out).toContain(`<a href="${href}" rel="noreferrer" data-airlock="embed-link">${title}</a>`);
      expect(r.removed['off-origin-embed']).toBe(1);
    });
  }

  it('hostile sources: quotes cannot leave the attribute, and a javascript: (or any non-web) source gets no link at all', async () => {
    const q = (
      await air(`<iframe src='https://www.youtube.com/embed/a"onmouseover="alert(1)' title='x"><img src=x onerror=alert(1)>'></iframe>`)
    ).html.toString();
    expect(q).not.toMatch(/<a [^>]*\sonmouseover=|<img/);
    expect(q).toContain('href="https://www.youtube.com/embed/a%22onmouseover=%22alert(1)"');
    for (const src of ['javascript://%0aalert(1)', 'JaVaScRiPt://x%0Aalert(1)', 'data://text/html,x', 'file:///etc/passwd']) {
      const out = (await air(`<iframe src="${src}" title="T"></iframe>`)).html.toString();
      expect(out, src).not.toMatch(/href="(?:javascript|data|file)/i);
      expect(out, src).not.toContain('<iframe');
    }
  });

  it('embedLink: known players by their URL; others keep the source as the link', () => {
    expect(embedLink('https://www.youtube.com/embed/videoseries?list=PL1')).toEqual({
      href: 'https://www.youtube.com/playlist?list=PL1',
      label: 'Video on YouTube',
    });
    expect(embedLink('https://cdn.example.net/x.svg')).toEqual({ href: 'https://cdn.example.net/x.svg', label: null });
    expect(embedLink('javascript://x')).toEqual({ href: null, label: null });
    expect(embedLink('https://www.youtube.com/embed/../../evil')).toEqual({ href: 'https://www.youtube.com/evil', label: null });
  });
});
