import { describe, it, expect, afterEach } from 'vitest';
import { trapSignals, whenAborted, type SignalTrap } from '../../src/util/signals.js';

/** The trap's rules, driven with process.emit (no real signal reaches the test runner). */
let trap: SignalTrap | null = null;
afterEach(() => {
  trap?.dispose();
  trap = null;
});

describe('trapSignals', () => {
  it('the first SIGTERM aborts; later signals are noted once and never abort twice', async () => {
    const notices: string[] = [];
    trap = trapSignals({ notice: (l) => notices.push(l) });
    expect(trap.signal.aborted).toBe(false);
    process.emit('SIGTERM', 'SIGTERM');
    await whenAborted(trap.signal);
    expect(trap.received).toBe('SIGTERM');
    for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGTERM'] as const) process.emit(s, s);
    expect(trap.received).toBe('SIGTERM');
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain('finishing the clean-up first');
  });

  it('SIGHUP stops by default, or calls the hang-up handler (serve reloads) without stopping', () => {
    trap = trapSignals();
    let reloads = 0;
    trap.onHangup(() => reloads++);
    process.emit('SIGHUP', 'SIGHUP');
    process.emit('SIGHUP', 'SIGHUP');
    expect(reloads).toBe(2);
    expect(trap.signal.aborted).toBe(false);
    trap.onHangup(null);
    process.emit('SIGHUP', 'SIGHUP');
    expect(trap.received).toBe('SIGHUP');
  });

  it('keeps its handlers after the first signal (a window without them is a kill mid-clean-up)', () => {
    const before = process.listenerCount('SIGTERM');
    trap = trapSignals();
    process.emit('SIGINT', 'SIGINT');
    expect(process.listenerCount('SIGTERM')).toBe(before + 1);
    expect(process.listenerCount('SIGINT')).toBeGreaterThan(0);
    trap.dispose();
    expect(process.listenerCount('SIGTERM')).toBe(before);
    trap = null;
  });
});
