/** The --vendor options, as `fetch` and `pack` both describe them. */
export const VENDOR_HELP = `  --vendor KINDS      carry third-party resources the pages use, comma-separated: fonts (web-font
                      stylesheets and their font files), styles (CDN stylesheets and what they
                      name), scripts (external scripts: only if you trust them to run on the
                      isolated side); serve maps the pages to these copies
  --vendor-mirror ORIGIN=URL
                      fetch ORIGIN's resources from URL instead (an internal CDN mirror or proxy;
                      http allowed there); repeatable. Without a mapping only https is fetched
  --vendor-observe    also carry what pages load at run time (a theme's script loading Mermaid or
                      a font from a CDN): render up to 50 pages (the home page, one per top-level
                      folder, one per distinct set of scripts and stylesheets; 15 s each) in
                      headless Chromium and vendor the scripts (only with the scripts kind),
                      stylesheets and fonts they request from other origins. Without Chromium,
                      says so and carries what the static scan finds
  --vendor-chromium PATH
                      the Chromium to render with (default: AIRLOCK_CHROMIUM, else /usr/bin/chromium)`;
