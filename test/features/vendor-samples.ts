/**
 * Real-world tag shapes of each analytics vendor, as their install docs hand them out (ids made
 * up). `markers` are strings that must be gone from the page once analytics is off.
 */
export interface VendorSample {
  vendor: string;
  html: string;
  markers: string[];
}

export const VENDOR_SAMPLES: VendorSample[] = [
  {
    vendor: 'google',
    html: `<link rel="preconnect" href="https://www.googletagmanager.com">
<link rel="dns-prefetch" href="//www.google-analytics.com">
<script>(function(w,d,s,l,i){w[l]=w[l]||[];w[l].push({'gtm.start':
new Date().getTime(),event:'gtm.js'});var f=d.getElementsByTagName(s)[0],
j=d.createElement(s),dl=l!='dataLayer'?'&l='+l:'';j.async=true;j.src=
'https://www.googletagmanager.com/gtm.js?id='+i+dl;f.parentNode.insertBefore(j,f);
})(window,document,'script','dataLayer','GTM-ABC1234');</script>
<script async src="https://www.googletagmanager.com/gtag/js?id=G-XYZ987"></script>
<script>
  window.dataLayer = window.dataLayer || [];
  function gtag(){dataLayer.push(arguments);}
  gtag('js', new Date());
  gtag('config', 'G-XYZ987');
</script>
<script>
(function(i,s,o,g,r,a,m){i['GoogleAnalyticsObject']=r;i[r]=i[r]||function(){
(i[r].q=i[r].q||[]).push(arguments)},i[r].l=1*new Date();a=s.createElement(o),
m=s.getElementsByTagName(o)[0];a.async=1;a.src=g;m.parentNode.insertBefore(a,m)
})(window,document,'script','https://www.google-analytics.com/analytics.js','ga');
ga('create', 'UA-000000-2', 'auto');
ga('send', 'pageview');
</script>`,
    markers: ['googletagmanager', 'google-analytics', 'gtag(', 'GTM-ABC1234', 'UA-000000-2'],
  },
  {
    vendor: 'google',
    html: `<noscript><iframe src="https://www.googletagmanager.com/ns.html?id=GTM-ABC1234"
height="0" width="0" style="display:none;visibility:hidden"></iframe></noscript>`,
    markers: ['GTM-ABC1234'],
  },
  {
    vendor: 'segment',
    html: `<script>
  !function(){var i="analytics",analytics=window[i]=window[i]||[];if(!analytics.initialize)if(analytics.invoked)window.console&&console.error&&console.error("Segment snippet included twice.");else{analytics.invoked=!0;analytics.methods=["trackSubmit","trackClick","trackLink","trackForm","pageview","identify","reset","group","track","ready","alias","debug","page","screen","once","off","on","addSourceMiddleware","addIntegrationMiddleware","setAnonymousId","addDestinationMiddleware","register"];analytics.factory=function(e){return function(){if(window[i].initialized)return window[i][e].apply(window[i],arguments);var n=Array.prototype.slice.call(arguments);if(["track","screen","alias","group","page","identify"].indexOf(e)>-1){var c=document.querySelector("link[rel='canonical']");n.push({__t:"bpc",c:c&&c.getAttribute("href")||void 0,p:location.pathname,u:location.href,s:location.search,t:document.title,r:document.referrer})}n.unshift(e);analytics.push(n);return analytics}};for(var n=0;n<analytics.methods.length;n++){var key=analytics.methods[n];analytics[key]=analytics.factory(key)}analytics.load=function(key,n){var t=document.createElement("script");t.type="text/javascript";t.async=!0;t.setAttribute("data-global-segment-analytics-key",i);t.src="https://cdn.segment.com/analytics.js/v1/" + key + "/analytics.min.js";var r=document.getElementsByTagName("script")[0];r.parentNode.insertBefore(t,r);analytics._loadOptions=n};analytics._writeKey="SEGKEY123";;analytics.SNIPPET_VERSION="5.2.0";
  analytics.load("SEGKEY123");
  analytics.page();
  }}();
</script>`,
    markers: ['SEGKEY123', 'cdn.segment.com'],
  },
  {
    vendor: 'posthog',
    html: `<script>
    !function(t,e){var o,n,p,r;e.__SV||(window.posthog=e,e._i=[],e.init=function(i,s,a){function g(t,e){var o=e.split(".");2==o.length&&(t=t[o[0]],e=o[1]),t[e]=function(){t.push([e].concat(Array.prototype.slice.call(arguments,0)))}}(p=t.createElement("script")).type="text/javascript",p.crossOrigin="anonymous",p.async=!0,p.src=s.api_host.replace(".i.posthog.com","-assets.i.posthog.com")+"/static/array.js",(r=t.getElementsByTagName("script")[0]).parentNode.insertBefore(p,r);var u=e;for(void 0!==a?u=e[a]=[]:a="posthog",u.people=u.people||[],u.toString=function(t){var e="posthog";return"posthog"!==a&&(e+="."+a),t||(e+=" (stub)"),e},u.people.toString=function(){return u.toString(1)+".people (stub)"},o="init capture register".split(" "),n=0;n<o.length;n++)g(u,o[n]);e._i.push([i,s,a])},e.__SV=1)}(document,window.posthog||[]);
    posthog.init('phc_TESTKEY',{api_host:'https://us.i.posthog.com', person_profiles: 'identified_only'})
</script>`,
    markers: ['phc_TESTKEY', 'posthog.com'],
  },
  {
    vendor: 'plausible',
    html: `<script defer data-domain="docs.example.com" src="https://plausible.io/js/script.js"></script>
<script>window.plausible = window.plausible || function() { (window.plausible.q = window.plausible.q || []).push(arguments) }</script>`,
    markers: ['plausible.io', 'window.plausible'],
  },
  {
    vendor: 'mixpanel',
    html: `<script type="text/javascript">
(function (f, b) { if (!b.__SV) { var e, g, i, h; window.mixpanel = b; b._i = []; b.init = function (e, f, c) { function g(a, d) { var b = d.split("."); 2 == b.length && ((a = a[b[0]]), (d = b[1])); a[d] = function () { a.push([d].concat(Array.prototype.slice.call(arguments, 0))); }; } var a = b; "undefined" !== typeof c ? (a = b[c] = []) : (c = "mixpanel"); a._i.push([e, f, c]); }; b.__SV = 1.2; e = f.createElement("script"); e.type = "text/javascript"; e.async = !0; e.src = "undefined" !== typeof MIXPANEL_CUSTOM_LIB_URL ? MIXPANEL_CUSTOM_LIB_URL : "file:" === f.location.protocol && "//cdn.mxpnl.com/libs/mixpanel-2-latest.min.js".match(/^\\/\\//) ? "https://cdn.mxpnl.com/libs/mixpanel-2-latest.min.js" : "//cdn.mxpnl.com/libs/mixpanel-2-latest.min.js"; g = f.getElementsByTagName("script")[0]; g.parentNode.insertBefore(e, g); } })(document, window.mixpanel || []);
mixpanel.init("MIXTOKEN42", { track_pageview: true });
</script>`,
    markers: ['MIXTOKEN42', 'mxpnl'],
  },
  {
    vendor: 'amplitude',
    html: `<script src="https://cdn.amplitude.com/script/AMPKEY77.js"></script>
<script>window.amplitude.add(window.sessionReplay.plugin({sampleRate: 1}));window.amplitude.init('AMPKEY77', {"autocapture":{"elementInteractions":true}});</script>`,
    markers: ['AMPKEY77', 'cdn.amplitude.com'],
  },
  {
    vendor: 'heap',
    html: `<script type="text/javascript">
  window.heapReadyCb=window.heapReadyCb||[],window.heap=window.heap||[],heap.load=function(e,t){window.heap.envId=e,window.heap.clientConfig=t=t||{},window.heap.clientConfig.shouldFetchServerConfig=!1;var a=document.createElement("script");a.type="text/javascript",a.async=!0,a.src="https://cdn.us.heap-api.com/config/"+e+"/heap_config.js";var r=document.getElementsByTagName("script")[0];r.parentNode.insertBefore(a,r);var n=["init","startTracking","stopTracking","track","resetIdentity","identify"],i=function(e){return function(){var t=Array.prototype.slice.call(arguments,0);window.heapReadyCb.push({name:e,fn:function(){heap[e]&&heap[e].apply(heap,t)}})}};for(var p=0;p<n.length;p++)heap[n[p]]=i(n[p])};
  heap.load("HEAPID555");
</script>`,
    markers: ['HEAPID555', 'heap-api.com'],
  },
  {
    vendor: 'hotjar',
    html: `<script>
    (function(h,o,t,j,a,r){
        h.hj=h.hj||function(){(h.hj.q=h.hj.q||[]).push(arguments)};
        h._hjSettings={hjid:3141592,hjsv:6};
        a=o.getElementsByTagName('head')[0];
        r=o.createElement('script');r.async=1;
        r.src=t+h._hjSettings.hjid+j+h._hjSettings.hjsv;
        a.appendChild(r);
    })(window,document,'https://static.hotjar.com/c/hotjar-','.js?sv=');
</script>`,
    markers: ['3141592', 'hotjar'],
  },
  {
    vendor: 'clarity',
    html: `<script type="text/javascript">
    (function(c,l,a,r,i,t,y){
        c[a]=c[a]||function(){(c[a].q=c[a].q||[]).push(arguments)};
        t=l.createElement(r);t.async=1;t.src="https://www.clarity.ms/tag/"+i;
        y=l.getElementsByTagName(r)[0];y.parentNode.insertBefore(t,y);
    })(window, document, "clarity", "script", "CLARITY9");
</script>`,
    markers: ['CLARITY9', 'clarity.ms'],
  },
  {
    vendor: 'fathom',
    html: `<script src="https://cdn.usefathom.com/script.js" data-site="FATHOM11" defer></script>`,
    markers: ['FATHOM11', 'usefathom'],
  },
  {
    vendor: 'vercel',
    html: `<script>window.va = window.va || function () { (window.vaq = window.vaq || []).push(arguments); };</script>
<script defer src="/_vercel/insights/script.js"></script>`,
    markers: ['window.va', '_vercel/insights'],
  },
  {
    // As Docusaurus's Matomo plugin and Matomo's own install page hand it out: a self-hosted tracker.
    vendor: 'matomo',
    html: `<script>
  var _paq = window._paq = window._paq || [];
  _paq.push(['trackPageView']);
  _paq.push(['enableLinkTracking']);
  (function() {
    var u="https://stats.example.org/";
    _paq.push(['setTrackerUrl', u+'matomo.php']);
    _paq.push(['setSiteId', '7']);
    var d=document, g=d.createElement('script'), s=d.getElementsByTagName('script')[0];
    g.async=true; g.src=u+'matomo.js'; s.parentNode.insertBefore(g,s);
  })();
</script>
<noscript><p><img referrerpolicy="no-referrer-when-downgrade" src="https://stats.example.org/matomo.php?idsite=7&amp;rec=1" style="border:0;" alt="" /></p></noscript>
<script async src="https://stats.example.org/piwik.js"></script>`,
    markers: ['_paq', 'stats.example.org', 'matomo.php', 'piwik.js'],
  },
  {
    vendor: 'umami',
    html: `<script defer src="https://cloud.umami.is/script.js" data-website-id="00000000-0000-4000-8000-00000000umam"></script>`,
    markers: ['umami.is', '00000000umam'],
  },
  {
    // Self-hosted Umami, its standard snippet: known by data-website-id and its script's name, on any host.
    vendor: 'umami',
    html: `<script defer data-website-id="abc" src="https://umami.mycorp.internal/script.js"></script>
<script async data-website-id="def" src="/stats/umami.js"></script>`,
    markers: ['umami.mycorp.internal', 'data-website-id', 'umami.js'],
  },
  {
    // Self-hosted Plausible, the tag split over lines: known by data-domain and /js/plausible*.js or /js/script*.js.
    vendor: 'plausible',
    html: `<script defer
   data-domain="docs.example.com"
   src="https://plausible.mycorp.internal/js/plausible.js"></script>
<script defer data-domain="docs.example.com" src="/js/script.outbound-links.js"></script>`,
    markers: ['plausible.mycorp.internal', 'data-domain', 'script.outbound-links.js'],
  },
  {
    vendor: 'simpleanalytics',
    html: `<script async defer src="https://scripts.simpleanalyticscdn.com/latest.js"></script>
<noscript><img src="https://queue.simpleanalyticscdn.com/noscript.gif" alt="" referrerpolicy="no-referrer-when-downgrade" /></noscript>`,
    markers: ['simpleanalyticscdn'],
  },
  {
    vendor: 'goatcounter',
    html: `<script data-goatcounter="https://docs-example.goatcounter.com/count" async src="//gc.zgo.at/count.js"></script>`,
    markers: ['goatcounter', 'gc.zgo.at'],
  },
  {
    vendor: 'cloudflare',
    html: `<script defer src='https://static.cloudflareinsights.com/beacon.min.js' data-cf-beacon='{"token": "cf0123456789abcdef"}'></script>`,
    markers: ['cloudflareinsights', 'cf0123456789abcdef'],
  },
  {
    vendor: 'yandex',
    html: `<script type="text/javascript">
   (function(m,e,t,r,i,k,a){m[i]=m[i]||function(){(m[i].a=m[i].a||[]).push(arguments)};
   m[i].l=1*new Date();k=e.createElement(t),a=e.getElementsByTagName(t)[0],k.async=1,k.src=r,a.parentNode.insertBefore(k,a)})
   (window, document, "script", "https://mc.yandex.ru/metrika/tag.js", "ym");
   ym(98765432, "init", { clickmap:true, trackLinks:true, accurateTrackBounce:true });
</script>
<noscript><div><img src="https://mc.yandex.ru/watch/98765432" style="position:absolute; left:-9999px;" alt="" /></div></noscript>`,
    markers: ['mc.yandex.ru', '98765432'],
  },
  {
    vendor: 'baidu',
    html: `<script>
var _hmt = _hmt || [];
(function() {
  var hm = document.createElement("script");
  hm.src = "https://hm.baidu.com/hm.js?0123456789abcdef0123456789abcdef";
  var s = document.getElementsByTagName("script")[0];
  s.parentNode.insertBefore(hm, s);
})();
</script>`,
    markers: ['hm.baidu.com', '_hmt'],
  },
  {
    vendor: 'onetrust',
    html: `<!-- OneTrust Cookies Consent Notice start for docs.example.com -->
<script type="text/javascript" src="https://cdn.cookielaw.org/consent/0190a3c4-0000-7000-8000-000000000001/OtAutoBlock.js"></script>
<script src="https://cdn.cookielaw.org/scripttemplates/otSDKStub.js" type="text/javascript" charset="UTF-8" data-domain-script="0190a3c4-0000-7000-8000-000000000001"></script>
<script type="text/javascript">
function OptanonWrapper() { }
</script>
<!-- OneTrust Cookies Consent Notice end -->`,
    markers: ['cdn.cookielaw.org', 'OptanonWrapper'],
  },
  {
    vendor: 'cookiebot',
    html: `<script id="Cookiebot" src="https://consent.cookiebot.com/uc.js" data-cbid="00000000-0000-4000-8000-000000000001" data-blockingmode="auto" type="text/javascript"></script>
<script>window.addEventListener('CookiebotOnAccept', function () { if (Cookiebot.consent.statistics) { window.loadStats && window.loadStats(); } });</script>`,
    markers: ['consent.cookiebot.com', 'CookiebotOnAccept'],
  },
  {
    vendor: 'osano',
    html: `<script src="https://cmp.osano.com/AzZd6cTcYkGFq2Mk/0fb9b5a8-0000-4000-8000-000000000001/osano.js"></script>`,
    markers: ['cmp.osano.com'],
  },
];

/** A page modelled on a Next.js (App Router) docs export, with a sample dropped into <head>. */
export function nextPage(headExtra: string, bodyExtra = ''): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charSet="utf-8"/><meta name="viewport" content="width=device-width, initial-scale=1"/>
<link rel="stylesheet" href="/_next/static/css/app-4f2a1c.css" data-precedence="next"/>
<link rel="preload" as="script" fetchPriority="low" href="/_next/static/chunks/webpack-1a2b3c.js"/>
<script src="/_next/static/chunks/main-app-9f8e7d.js" async=""></script>
<title>Analytics - Docs</title>
${headExtra}
</head><body class="__className_abc"><div id="search-bar" data-airlock-feature="search"><input type="search"/></div>
<main><h1>Analytics</h1><p style="color:transparent">Add <code>gtag('config', 'G-XYZ')</code> to your site.</p></main>
${bodyExtra}
<script>(self.__next_f=self.__next_f||[]).push([0])</script>
<script>self.__next_f.push([1,"1:HL[\\"/_next/static/css/app-4f2a1c.css\\",\\"style\\"]\\n2:T1a,window.dataLayer = window.dataLayer || [];gtag('config', 'G-XYZ'); posthog.init('phc_doc')"])</script>
</body></html>`;
}
