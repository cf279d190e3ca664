import { Hono } from 'hono';
import {
  cspFor, failFastResponse, featureForPath, featuresDocument, isOn, transformHtmlDetailed, type ResolvedFeatures,
} from '../features/index.js';
import type { AppEnv } from './app.js';
import type { AirlockServerOptions } from './server.js';

/**
 * The server options a deployment type implies (src/features is the single source): the
 * `/_airlock/features` document, the CSP (with the hashes of the inline code the HTML transform
 * kept), the HTML transform itself (once per version), and fail-fast 404s for calls of features
 * that are off. Relays for features that are on are mounted by src/features' owner via `app`.
 */
export function featureOptions(resolved: ResolvedFeatures): Pick<AirlockServerOptions, 'features' | 'csp' | 'transformHtml' | 'appRoute' | 'app'> {
  const doc = featuresDocument(resolved);
  const off = (method: string, path: string) => {
    const f = featureForPath(method, path);
    return f !== null && !isOn(resolved, f);
  };
  const app = new Hono<AppEnv>();
  app.all('*', (c, next) => {
    const f = featureForPath(c.req.method, c.req.path);
    if (f === null || isOn(resolved, f)) return next();
    const r = failFastResponse(f, resolved.deployment);
    return c.body(r.body, r.status, r.headers);
  });
  return {
    features: () => doc,
    csp: ({ scriptHashes, styleHashes }) => cspFor(resolved, { scriptHashes, styleHashes }),
    transformHtml: async (html) => {
      const r = await transformHtmlDetailed(html, { features: resolved.features, deployment: resolved.deployment });
      return { html: r.html, scriptHashes: r.scriptHashes, styleHashes: r.styleHashes };
    },
    appRoute: off,
    app,
  };
}
