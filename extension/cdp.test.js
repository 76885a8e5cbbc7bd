import { test } from 'node:test';
import assert from 'node:assert/strict';
import { imageSize } from './image.js';
import { docToken } from './store.js';
import { displayTitle, parseId } from './tabs.js';

const b64 = (bytes) => Buffer.from(bytes).toString('base64');

test('imageSize reads a PNG header and a JPEG frame header', () => {
  const png = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0x03, 0x0c, 0, 0, 0x01, 0xb5, 8, 6, 0, 0, 0];
  assert.deepEqual(imageSize(b64(png)), { width: 780, height: 437 });
  // SOI, an APP0 segment, a DQT segment, then SOF0 (height 2000, width 765)
  const jpeg = [0xff, 0xd8, 0xff, 0xe0, 0, 4, 0, 0, 0xff, 0xdb, 0, 3, 0, 0xff, 0xc0, 0, 11, 8, 0x07, 0xd0, 0x02, 0xfd, 3, 0, 0, 0, 0, 0];
  assert.deepEqual(imageSize(b64(jpeg)), { width: 765, height: 2000 });
  assert.throws(() => imageSize(b64([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])), (e) => e.code === 'INTERNAL');
});

test('document tokens are lowercase letters, two at least, distinct per number', () => {
  assert.equal(docToken(0), 'aa');
  assert.equal(docToken(27), 'bb');
  const seen = new Set();
  for (let n = 676; n < 676 + 5000; n++) {
    const t = docToken(n);
    assert.match(t, /^[a-z]{2,}$/);
    seen.add(t);
  }
  assert.equal(seen.size, 5000);
});

test('a title that is the URL Chrome shows for an untitled page is no title', () => {
  assert.equal(displayTitle('127.0.0.1:8080/404', 'http://127.0.0.1:8080/404'), '');
  assert.equal(displayTitle('about:blank', 'about:blank'), '');
  assert.equal(displayTitle('Test page', 'http://x/'), 'Test page');
  assert.equal(displayTitle(undefined, 'http://x/'), '');
});

test('tab ids on the wire are decimal strings', () => {
  assert.equal(parseId('123'), 123);
  for (const bad of ['', 'ext:ab:1', '-1', '1.5', 'abc', 1]) {
    assert.throws(() => parseId(bad), (e) => e.code === 'TAB_NOT_FOUND');
  }
});
