// emulate.js sends what the Go CDP backend sends: the golden file
// executor/cdp/testdata/emulation_commands.json is written from
// EmulationCommands (go test ./executor/cdp -run TestEmulationCommands
// with UPDATE_GOLDEN=1), and each of its cases must give the same
// commands here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { commands, set, emulation, isZero } from './emulate.js';

const golden = JSON.parse(readFileSync(new URL('../executor/cdp/testdata/emulation_commands.json', import.meta.url), 'utf8'));

test('the commands of each emulation are the Go backend\'s', () => {
  assert.ok(golden.length >= 3);
  for (const c of golden) {
    assert.deepEqual(commands(c.emulation), c.commands.map((x) => ({ method: x.Method, params: x.Params })), c.name);
  }
});

test('set sends every command to every tab, skips a tab that closed, and keeps no granted origin', async () => {
  const sent = [];
  const send = async (id, m, p) => {
    if (id === 2) {
      const e = new Error('gone');
      e.code = 'TAB_NOT_FOUND';
      throw e;
    }
    sent.push([id, m, p]);
  };
  const e = { timezone: 'Asia/Tokyo', geolocation: { latitude: 1, longitude: 2, accuracy: 3 }, geoOrigin: 'https://a.test' };
  const got = await set(e, [1, 2, 3], send);
  assert.equal(got.geoOrigin, undefined);
  assert.deepEqual(emulation(), got);
  const n = commands(e).length;
  assert.equal(sent.length, 2 * n);
  assert.deepEqual(sent.filter((s) => s[0] === 3).map((s) => s[1]), commands(e).map((c) => c.method));
  await set({}, [], send);
  assert.ok(isZero(emulation()));
});

test('a failure other than a closed tab is the call\'s', async () => {
  const send = async () => {
    const e = new Error('Invalid timezone');
    e.code = 'INTERNAL';
    throw e;
  };
  await assert.rejects(set({ timezone: 'x' }, [1], send), /Invalid timezone/);
});
