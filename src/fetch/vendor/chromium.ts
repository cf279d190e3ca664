/**
 * Headless Chromium for `--vendor-observe`: where it is, and how it is started. playwright-core
 * drives it (pure JavaScript, an optional dependency that downloads no browser); the browser is
 * the system's (Debian's `chromium` package) or the one an option or `AIRLOCK_CHROMIUM` names.
 */
export const DEFAULT_CHROMIUM = '/usr/bin/chromium';

/**
 * Headless, no sandbox (containers run as root), and no background traffic of Chromium's own, so
 * that every request seen is the page's. The browser tests start Chromium with the same flags.
 */
export const CHROMIUM_ARGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];
