/** The --vendor options, as `fetch` and `pack` both describe them. */
export const VENDOR_HELP = `  --vendor KINDS      carry third-party resources the pages use, comma-separated: fonts (web-font
                      stylesheets and their font files), styles (CDN stylesheets and what they
                      name), scripts (external scripts: only if you trust them to run on the
                      isolated side); serve maps the pages to these copies
  --vendor-mirror ORIGIN=URL
                      fetch ORIGIN's resources from URL instead (an internal CDN mirror or proxy;
                      http allowed there); repeatable. Without a mapping only https is fetched`;
