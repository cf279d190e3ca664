/**
 * Third-party analytics vendors, as data. To add one, append an entry: the HTML transform removes
 * its tags when analytics is off and the CSP admits its origins only when analytics is on.
 *
 * - hosts: registrable hosts; a URL matches when its host equals one or is a subdomain of one.
 *   Used for `<script src>`, `<link rel=preconnect|dns-prefetch|preload>`, `<img>`/`<iframe>`
 *   pixels, and text inside `<noscript>`.
 * - pathPrefixes: same-origin path prefixes that only this vendor uses (first-party proxies);
 *   plain strings, because they also become `script[src^=…]` selectors.
 * - files: file names only this vendor serves, on whatever host runs it (self-hosted trackers
 *   such as Matomo): matched on the path of an absolute URL and in `<noscript>` text.
 * - tags: the vendor's own `<script>` tag on whatever host runs it (self-hosted Umami, Plausible):
 *   an attribute only its snippet carries together with a src path only it uses. Both must match.
 * - snippets: signatures of the vendor's inline bootstrap snippet, tested on ONE inline script's
 *   text (never on a whole document).
 * - script/connect/img: CSP sources the vendor needs when analytics is on.
 */
export interface AnalyticsVendor {
  id: string;
  name: string;
  hosts: string[];
  pathPrefixes?: string[];
  files?: RegExp[];
  tags?: Array<{ attr: string; src: RegExp }>;
  snippets: RegExp[];
  script: string[];
  connect: string[];
  img: string[];
}

export const ANALYTICS_VENDORS: readonly AnalyticsVendor[] = [
  {
    id: 'google',
    name: 'Google Tag Manager / Google Analytics',
    hosts: ['googletagmanager.com', 'google-analytics.com', 'analytics.google.com', 'stats.g.doubleclick.net'],
    snippets: [
      /googletagmanager\.com\/(gtag|gtm|ns)/,
      /google-analytics\.com\/(analytics|ga|urchin)\.js/,
      /\bgtag\(\s*['"](js|config|event|consent)['"]/,
      /GoogleAnalyticsObject/,
      /['"]script['"]\s*,\s*['"]dataLayer['"]/,
      /\bwindow\.dataLayer\s*=\s*window\.dataLayer\s*\|\|/,
    ],
    script: ['https://www.googletagmanager.com', 'https://www.google-analytics.com', 'https://ssl.google-analytics.com'],
    connect: [
      'https://www.google-analytics.com',
      'https://*.google-analytics.com',
      'https://analytics.google.com',
      'https://*.analytics.google.com',
      'https://www.googletagmanager.com',
      'https://stats.g.doubleclick.net',
    ],
    img: ['https://www.google-analytics.com', 'https://*.google-analytics.com', 'https://www.googletagmanager.com', 'https://stats.g.doubleclick.net'],
  },
  {
    id: 'segment',
    name: 'Segment',
    hosts: ['cdn.segment.com', 'cdn.segment.io', 'api.segment.io'],
    snippets: [/cdn\.segment\.(com|io)/, /\banalytics\.load\s*\(/, /\.SNIPPET_VERSION\s*=/],
    script: ['https://cdn.segment.com'],
    connect: ['https://api.segment.io', 'https://cdn.segment.com'],
    img: [],
  },
  {
    id: 'posthog',
    name: 'PostHog',
    hosts: ['posthog.com'],
    snippets: [/\bposthog\.init\s*\(/, /posthog\.com\/static\/array\.js/, /\bwindow\.posthog\s*=/],
    script: ['https://*.posthog.com'],
    connect: ['https://*.posthog.com'],
    img: [],
  },
  {
    id: 'plausible',
    name: 'Plausible',
    hosts: ['plausible.io'],
    tags: [{ attr: 'data-domain', src: /\/js\/(?:plausible|script)(?:\.[\w-]+)*\.js$/ }],
    snippets: [/plausible\.io\/js\//, /\bwindow\.plausible\s*=\s*window\.plausible\s*\|\|/],
    script: ['https://plausible.io'],
    connect: ['https://plausible.io'],
    img: [],
  },
  {
    id: 'mixpanel',
    name: 'Mixpanel',
    hosts: ['mxpnl.com', 'mixpanel.com'],
    snippets: [/\bmixpanel\.init\s*\(/, /MIXPANEL_CUSTOM_LIB_URL/, /cdn\.mxpnl\.com/],
    script: ['https://cdn.mxpnl.com'],
    connect: ['https://api-js.mixpanel.com', 'https://api.mixpanel.com', 'https://*.mixpanel.com'],
    img: [],
  },
  {
    id: 'amplitude',
    name: 'Amplitude',
    hosts: ['amplitude.com'],
    snippets: [/cdn\.amplitude\.com/, /\bamplitude\.(init|getInstance)\s*\(/],
    script: ['https://cdn.amplitude.com'],
    connect: ['https://api2.amplitude.com', 'https://*.amplitude.com'],
    img: [],
  },
  {
    id: 'heap',
    name: 'Heap',
    hosts: ['heapanalytics.com', 'heap-api.com'],
    snippets: [/\bheap\.load\s*\(/, /heapanalytics\.com/, /heap-api\.com/],
    script: ['https://cdn.heapanalytics.com', 'https://cdn.us.heap-api.com'],
    connect: ['https://heapanalytics.com', 'https://*.heapanalytics.com', 'https://*.heap-api.com'],
    img: ['https://heapanalytics.com', 'https://*.heapanalytics.com'],
  },
  {
    id: 'hotjar',
    name: 'Hotjar',
    hosts: ['hotjar.com', 'hotjar.io'],
    snippets: [/static\.hotjar\.com/, /\b_hjSettings\b/, /\bh\.hj\s*=\s*h\.hj\s*\|\|/],
    script: ['https://static.hotjar.com', 'https://script.hotjar.com'],
    connect: ['https://*.hotjar.com', 'https://*.hotjar.io', 'wss://*.hotjar.com'],
    img: ['https://*.hotjar.com'],
  },
  {
    id: 'clarity',
    name: 'Microsoft Clarity',
    hosts: ['clarity.ms'],
    snippets: [/clarity\.ms\/tag\//, /['"]clarity['"]\s*,\s*['"]script['"]/],
    script: ['https://www.clarity.ms', 'https://*.clarity.ms'],
    connect: ['https://*.clarity.ms'],
    img: ['https://*.clarity.ms', 'https://c.bing.com'],
  },
  {
    id: 'fathom',
    name: 'Fathom',
    hosts: ['usefathom.com'],
    snippets: [/cdn\.usefathom\.com/, /\bfathom\.(trackPageview|trackGoal|trackEvent)\s*\(/],
    script: ['https://cdn.usefathom.com'],
    connect: ['https://cdn.usefathom.com'],
    img: [],
  },
  {
    // Usually self-hosted (any host), so its file names and its `_paq` queue identify it.
    id: 'matomo',
    name: 'Matomo (Piwik)',
    hosts: ['matomo.cloud', 'innocraft.cloud'],
    files: [/\/(?:matomo|piwik)\.(?:js|php)(?![\w.-])/],
    snippets: [/\b_paq\s*\.\s*push\s*\(/, /\bwindow\._paq\s*=/, /['"](?:matomo|piwik)\.(?:js|php)['"]/],
    script: ['https://cdn.matomo.cloud'],
    connect: ['https://*.matomo.cloud'],
    img: ['https://*.matomo.cloud'],
  },
  {
    id: 'umami',
    name: 'Umami',
    hosts: ['umami.is'],
    tags: [{ attr: 'data-website-id', src: /\/(?:script|umami)\.js$/ }],
    snippets: [/cloud\.umami\.is\//, /\bumami\.track\s*\(/],
    script: ['https://cloud.umami.is'],
    connect: ['https://cloud.umami.is', 'https://api-gateway.umami.dev'],
    img: [],
  },
  {
    id: 'simpleanalytics',
    name: 'Simple Analytics',
    hosts: ['simpleanalyticscdn.com', 'simpleanalytics.com'],
    snippets: [/simpleanalyticscdn\.com\//, /\bsa_event\s*\(/],
    script: ['https://scripts.simpleanalyticscdn.com'],
    connect: ['https://queue.simpleanalyticscdn.com'],
    img: ['https://queue.simpleanalyticscdn.com'],
  },
  {
    id: 'goatcounter',
    name: 'GoatCounter',
    hosts: ['goatcounter.com', 'gc.zgo.at'],
    snippets: [/gc\.zgo\.at\//, /\bwindow\.goatcounter\s*=/, /goatcounter\.com\/count/],
    script: ['https://gc.zgo.at'],
    connect: ['https://*.goatcounter.com'],
    img: ['https://*.goatcounter.com'],
  },
  {
    id: 'cloudflare',
    name: 'Cloudflare Web Analytics',
    hosts: ['cloudflareinsights.com'],
    snippets: [/static\.cloudflareinsights\.com\//],
    script: ['https://static.cloudflareinsights.com'],
    connect: ['https://cloudflareinsights.com'],
    img: [],
  },
  {
    id: 'yandex',
    name: 'Yandex Metrica',
    hosts: ['mc.yandex.ru', 'mc.yandex.com', 'mc.webvisor.org'],
    snippets: [/mc\.yandex\.(?:ru|com)\/metrika\//, /\bym\(\s*\d+\s*,\s*['"]init['"]/],
    script: ['https://mc.yandex.ru'],
    connect: ['https://mc.yandex.ru', 'https://mc.yandex.com'],
    img: ['https://mc.yandex.ru'],
  },
  {
    id: 'baidu',
    name: 'Baidu Tongji',
    hosts: ['hm.baidu.com'],
    snippets: [/hm\.baidu\.com\/hm\.js/, /\bvar\s+_hmt\s*=\s*_hmt\s*\|\|/],
    script: ['https://hm.baidu.com'],
    connect: ['https://hm.baidu.com'],
    img: ['https://hm.baidu.com'],
  },
  // Consent managers exist only for the trackers: with analytics off their banner, loader and
  // bootstrap go too (and with it on, the CSP admits them like any vendor).
  {
    id: 'onetrust',
    name: 'OneTrust cookie consent',
    hosts: ['cookielaw.org', 'onetrust.com'],
    snippets: [/\bfunction\s+OptanonWrapper\s*\(/, /cdn\.cookielaw\.org\//, /\botSDKStub\.js\b/],
    script: ['https://cdn.cookielaw.org'],
    connect: ['https://cdn.cookielaw.org', 'https://geolocation.onetrust.com', 'https://privacyportal.onetrust.com'],
    img: ['https://cdn.cookielaw.org'],
  },
  {
    id: 'cookiebot',
    name: 'Cookiebot consent',
    hosts: ['cookiebot.com', 'cookiebot.eu'],
    snippets: [/consent\.cookiebot\.(com|eu)\//, /\bwindow\.addEventListener\(\s*['"]CookiebotOn(Accept|Decline|Load)['"]/],
    script: ['https://consent.cookiebot.com', 'https://consentcdn.cookiebot.com'],
    connect: ['https://consent.cookiebot.com', 'https://consentcdn.cookiebot.com'],
    img: ['https://imgsct.cookiebot.com'],
  },
  {
    id: 'osano',
    name: 'Osano consent',
    hosts: ['osano.com'],
    snippets: [/cmp\.osano\.com\//, /\bOsano\.cm\.addEventListener\s*\(/],
    script: ['https://cmp.osano.com'],
    connect: ['https://*.osano.com'],
    img: [],
  },
  {
    // Vercel Web Analytics / Speed Insights load from a first-party path, so only the prefixes catch them.
    id: 'vercel',
    name: 'Vercel Web Analytics',
    hosts: ['va.vercel-scripts.com'],
    pathPrefixes: ['/_vercel/insights/', '/_vercel/speed-insights/'],
    snippets: [/\bwindow\.va\s*=\s*window\.va\s*\|\|/, /\bwindow\.si\s*=\s*window\.si\s*\|\|/],
    script: ['https://va.vercel-scripts.com'],
    connect: [],
    img: [],
  },
];
