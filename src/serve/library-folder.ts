import { join } from 'node:path';
import { librarySites } from '../store/library.js';
import { escapeControls } from '../util/terminal.js';

/**
 * The library folder as the server last read it: its sites (`known`), read again by `read()`.
 * A folder that is no site is warned about once; a folder that cannot be read (removed, renamed,
 * a disk gone) is said once, and its sites stay known, served as they were, until it is back.
 */
export class LibraryFolder {
  known = new Set<string>();
  /** Why the folder cannot be read now; null while it can. */
  unreadable: string | null = null;
  private readonly warned = new Set<string>();

  constructor(
    private readonly library: string,
    private readonly log: (line: string) => void,
  ) {}

  /** The first reading: a library that cannot be read is refused (thrown), not served. */
  async open(): Promise<void> {
    this.known = new Set((await this.scan()).sites);
  }

  /** Read it again; resolves with the sites no longer there. */
  async read(): Promise<string[]> {
    const sites = await this.scan().then(
      (l) => {
        if (this.unreadable !== null) this.log(`airlock serve: the library ${this.library} can be read again`);
        this.unreadable = null;
        return l.sites;
      },
      (err: unknown) => {
        const why = err instanceof Error ? err.message : String(err);
        if (this.unreadable !== why)
          this.log(`airlock serve: cannot read the library: ${why}; its ${this.known.size} site(s) are served as they were until it is back`);
        this.unreadable = why;
        return [...this.known];
      },
    );
    const now = new Set(sites);
    const removed = [...this.known].filter((d) => !now.has(d));
    this.known = now;
    return removed;
  }

  private async scan() {
    const listing = await librarySites(this.library);
    for (const s of listing.skipped)
      if (!this.warned.has(s.name) && this.warned.add(s.name))
        this.log(`airlock serve: warning: ${escapeControls(join(this.library, s.name))} ${s.why}; it is not served`);
    return listing;
  }
}
