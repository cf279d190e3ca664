/** The end of the help of activate and rollback, the two commands that switch the active version: flags, JSON and exit codes. */
export const switchHelp = (failure: string): string => `  --json             print one JSON document on stdout ({ok, store, active})

Exit codes: 0 ok, 1 failure (e.g. ${failure}), 2 usage, 4 the audit log does not verify
(AIRLOCK_AUDIT_BROKEN: nothing was changed; see airlock audit verify).`;
