import { describe, it, expect } from 'vitest';
import { airlock } from '../helpers/bin.js';

describe('airlock binary', () => {
  it('prints the tool version from package.json', () => {
    const r = airlock(['--version']);
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('exits 2 on an unknown command and names it', () => {
    const r = airlock(['frobnicate']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('"frobnicate"');
    expect(r.stderr).toContain('[AIRLOCK_USAGE]');
  });

  it('a misspelt command gets "did you mean" with the nearest one', () => {
    const r = airlock(['impor']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('unknown command "impor" [AIRLOCK_USAGE]; did you mean "import"?');
  });

  it('an empty --store is a usage error naming the flag, not ./airlock-store', () => {
    const r = airlock(['list', '--store', '']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--store is empty');
    expect(r.stderr).toContain('[AIRLOCK_USAGE]');
    expect(r.stderr).not.toContain(`${process.cwd()}/airlock-store`);
  });

  it('refuses an API key given on the command line and never echoes it', () => {
    const r = airlock(['list', '--store', 'svc_abcdef123456']);
    expect(r.status).toBe(2);
    expect(r.stderr + r.stdout).not.toContain('svc_abcdef123456');
  });
});
