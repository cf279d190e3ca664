import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { assistantBody, fixtureStore, postJson, startAirlock } from './helpers.js';

let fx: Awaited<ReturnType<typeof fixtureStore>>;
let emu: RunningEmulator;
const cleanups: Array<() => Promise<void>> = [];
beforeAll(async () => {
  fx = await fixtureStore();
  emu = await startEmulator({ streamDelayMs: 0 });
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  emu.state.apiRequests.length = 0;
});
afterAll(async () => {
  await emu?.close();
  await fx?.cleanup();
});

const calls = () => emu.state.apiRequests.filter((r) => r.path.startsWith('/discovery/')).length;

describe('relay rate limits', () => {
  it('quota exhaustion: a tight loop past the organisation limit gets 429 + Retry-After, and the upstream is not called', async () => {
    let now = 1_000_000;
    const air = await startAirlock(
      fx.store,
      { deployment: 'cloud' },
      { upstreamUrl: emu.url, key: emu.keys.assistant, limits: { orgPerHour: 5 }, now: () => now },
    );
    cleanups.push(() => air.close());
    const url = `${air.origin}/discovery/v2/assistant/docs.example.com/message`;
    const statuses: number[] = [];
    let limited: Response | null = null;
    for (let i = 0; i < 12; i++) {
      const res = await postJson(url, assistantBody());
      statuses.push(res.status);
      if (res.status === 429) limited = res;
      await res.text();
    }
    expect(statuses).toEqual([...Array<number>(5).fill(200), ...Array<number>(7).fill(429)]);
    expect(calls()).toBe(5);
    expect(limited!.headers.get('retry-after')).toBe('3600');
    expect(limited!.headers.get('content-type')).toMatch(/^application\/json/);
    // search shares the organisation's budget
    const search = await fetch(`${air.origin}/discovery/v2/search/docs.example.com?q=token`);
    expect(search.status).toBe(429);
    expect(calls()).toBe(5);
    // a minute before the hour ends the wait shrinks; after it, requests pass again
    now += 59 * 60_000;
    const later = await postJson(url, assistantBody());
    expect(later.headers.get('retry-after')).toBe('60');
    await later.text();
    now += 60_000;
    const next = await postJson(url, assistantBody());
    expect(next.status).toBe(200);
    await next.text();
    expect(calls()).toBe(6);
  });

  it('the per-IP daily limit answers 429 with a day-long Retry-After', async () => {
    const air = await startAirlock(
      fx.store,
      { deployment: 'cloud' },
      { upstreamUrl: emu.url, key: emu.keys.assistant, limits: { ipPerDay: 3, orgPerHour: 100 } },
    );
    cleanups.push(() => air.close());
    const url = `${air.origin}/discovery/v2/search/docs.example.com?q=token`;
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await fetch(url).then(async (r) => (await r.text(), r))).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const res = await fetch(url);
    const retry = Number(res.headers.get('retry-after'));
    expect(retry).toBeGreaterThan(86_000);
    expect(retry).toBeLessThanOrEqual(86_400);
    expect(((await res.json()) as { error: string }).error).toMatch(/per client IP per day/);
    expect(calls()).toBe(3);
  });

  it('requests refused as invalid do not spend the budget', async () => {
    const air = await startAirlock(fx.store, { deployment: 'cloud' }, { upstreamUrl: emu.url, key: emu.keys.assistant, limits: { orgPerHour: 1 } });
    cleanups.push(() => air.close());
    const url = `${air.origin}/discovery/v2/assistant/docs.example.com/message`;
    for (let i = 0; i < 5; i++) expect((await postJson(url, '{bad')).status).toBe(400);
    const ok = await postJson(url, assistantBody());
    expect(ok.status).toBe(200);
    await ok.text();
  });
});
