import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NetLogs, TabLog, redactHeaders, redactURL, resourceType, textBody, REDACTED, MAX_BODY_BYTES } from './netlog.js';

const MAIN = 'F1';

function sent(log, id, url, { type = 'Fetch', loaderId = 'L0', frameId = MAIN, method = 'GET', ts = 1, redirectResponse, headers = {} } = {}) {
  log.onEvent('Network.requestWillBeSent', { requestId: id, loaderId, frameId, type, timestamp: ts, request: { url, method, headers }, redirectResponse }, MAIN);
}
function done(log, id, status, { ts = 1.25, size = 10, mimeType = 'text/plain', headers = {} } = {}) {
  log.onEvent('Network.responseReceived', { requestId: id, response: { status, mimeType, headers } }, MAIN);
  log.onEvent('Network.loadingFinished', { requestId: id, timestamp: ts, encodedDataLength: size }, MAIN);
}

test('credential headers are redacted, every Set-Cookie line', () => {
  const got = redactHeaders({
    Cookie: 'sid=s3cret', authorization: 'Bearer t0ken', 'Proxy-Authorization': 'Basic x', 'set-cookie': 'a=1\nb=2', Accept: '*/*',
  });
  assert.deepEqual(got, [
    { name: 'Accept', value: '*/*' },
    { name: 'authorization', value: REDACTED },
    { name: 'Cookie', value: REDACTED },
    { name: 'Proxy-Authorization', value: REDACTED },
    { name: 'set-cookie', value: REDACTED },
    { name: 'set-cookie', value: REDACTED },
  ]);
  assert.ok(!JSON.stringify(got).match(/s3cret|t0ken|a=1|b=2/));
});

test('URLs lose their userinfo', () => {
  assert.equal(redactURL('https://u:p@a.test/x?y=@z'), 'https://a.test/x?y=@z');
  assert.equal(redactURL('http://a.test/@b'), 'http://a.test/@b');
  assert.equal(redactURL('about:blank'), 'about:blank');
});

test('resource types read as Playwright names them', () => {
  assert.equal(resourceType('XHR'), 'xhr');
  assert.equal(resourceType('Document'), 'document');
  assert.equal(resourceType('Preflight'), 'other');
  assert.equal(resourceType(undefined), 'other');
});

test('a request, its response and its end', () => {
  const log = new TabLog({ now: () => 1000 });
  sent(log, 'L1', 'https://a.test/', { type: 'Document', loaderId: 'L1', ts: 10 });
  log.onEvent('Network.requestWillBeSentExtraInfo', { requestId: 'L1', headers: { Cookie: 'sid=SECRET' } });
  log.onEvent('Network.responseReceivedExtraInfo', { requestId: 'L1', headers: { 'Set-Cookie': 'x=SECRET' } });
  done(log, 'L1', 200, { ts: 10.042, size: 512, mimeType: 'text/html' });
  sent(log, 'r2', 'https://evil.test/x', { ts: 11 });
  log.onEvent('Network.loadingFailed', { requestId: 'r2', timestamp: 11.003, errorText: 'net::ERR_BLOCKED_BY_CLIENT' });
  sent(log, 'r3', 'https://a.test/slow', { ts: 12 });
  const l = log.list(1);
  assert.equal(l.nav, 1);
  assert.deepEqual(l.requests.map((r) => [r.id, r.resourceType, r.status || 0, r.size, r.durationMs, r.outcome, r.error || '']), [
    ['1', 'document', 200, 512, 42, 'allowed', ''],
    ['2', 'fetch', 0, -1, 3, 'failed', 'net::ERR_BLOCKED_BY_CLIENT'],
    ['3', 'fetch', 0, -1, -1, 'pending', ''],
  ]);
  assert.equal(l.requests[0].navigation, true);
  const e = log.find('1');
  assert.equal(e.requestId, 'L1');
  assert.ok(!JSON.stringify(e).includes('SECRET'));
  assert.deepEqual(e.request.requestHeaders, [{ name: 'Cookie', value: REDACTED }]);
  assert.equal(log.find('99'), null);
});

test('ExtraInfo that comes before the request or after its end still reaches it, and is redacted', () => {
  const log = new TabLog();
  // Chrome sends ExtraInfo on its own path: here the request's comes
  // first, and the response's after the request finished.
  log.onEvent('Network.requestWillBeSentExtraInfo', { requestId: 'r1', headers: { Cookie: 'sid=EARLY-SECRET' } });
  sent(log, 'r1', 'https://a.test/api', { headers: { Accept: '*/*' } });
  log.onEvent('Network.responseReceived', { requestId: 'r1', hasExtraInfo: true, response: { status: 200, mimeType: 'application/json', headers: { 'Content-Type': 'application/json' } } }, MAIN);
  log.onEvent('Network.loadingFinished', { requestId: 'r1', timestamp: 2, encodedDataLength: 10 }, MAIN);
  assert.equal(log.extraDue('1'), true, 'the response ExtraInfo Chrome promised has not come');
  log.onEvent('Network.responseReceivedExtraInfo', { requestId: 'r1', headers: { 'Set-Cookie': 'x=LATE-SECRET' } });
  assert.equal(log.extraDue('1'), false);
  const e = log.find('1');
  assert.ok(!JSON.stringify(e).includes('SECRET'));
  assert.deepEqual(e.request.requestHeaders, [{ name: 'Accept', value: '*/*' }, { name: 'Cookie', value: REDACTED }]);
  assert.deepEqual(e.request.responseHeaders, [{ name: 'Content-Type', value: 'application/json' }, { name: 'Set-Cookie', value: REDACTED }]);
  // Headers of requests never seen are bounded, and so are ended requests
  // kept for late headers.
  for (let i = 0; i < 1000; i++) log.onEvent('Network.requestWillBeSentExtraInfo', { requestId: `x${i}`, headers: { Cookie: 'c' } });
  assert.ok(log.early.size <= 200, `early holds ${log.early.size}`);
  for (let i = 0; i < 300; i++) {
    sent(log, `d${i}`, `https://a.test/${i}`);
    done(log, `d${i}`, 200);
  }
  assert.ok(log.ended.size <= 200, `ended holds ${log.ended.size}`);
});

test('a redirect hop ends with its status and the next hop is a new entry of the same generation', () => {
  const log = new TabLog();
  sent(log, 'L1', 'http://a.test/old', { type: 'Document', loaderId: 'L1', ts: 1 });
  sent(log, 'L1', 'http://a.test/new', { type: 'Document', loaderId: 'L1', ts: 1.01, redirectResponse: { status: 302, headers: { Location: '/new' } } });
  done(log, 'L1', 200);
  const l = log.list(1);
  assert.equal(l.nav, 1);
  assert.deepEqual(l.requests.map((r) => [r.url, r.status, r.outcome]), [
    ['http://a.test/old', 302, 'allowed'],
    ['http://a.test/new', 200, 'allowed'],
  ]);
});

test('a main-frame navigation starts a generation; a frame\'s does not; listings reach back', () => {
  const log = new TabLog();
  sent(log, 'L1', 'https://a.test/', { type: 'Document', loaderId: 'L1' });
  sent(log, 'x', 'https://a.test/app.js', { type: 'Script', loaderId: 'L1' });
  sent(log, 'L9', 'https://frame.test/', { type: 'Document', loaderId: 'L9', frameId: 'F2' });
  sent(log, 'L2', 'https://b.test/', { type: 'Document', loaderId: 'L2' });
  assert.deepEqual(log.list(1).requests.map((r) => r.url), ['https://b.test/']);
  assert.equal(log.list(2).requests.length, 4);
  assert.equal(log.list(50).requests.length, 4);
});

test('the ring is bounded and counts what it let go', () => {
  const log = new TabLog({ max: 5 });
  sent(log, 'L1', 'https://a.test/', { type: 'Document', loaderId: 'L1' });
  for (let i = 0; i < 9; i++) sent(log, 'r' + i, 'https://a.test/' + i);
  const l = log.list(1);
  assert.equal(l.requests.length, 5);
  assert.equal(l.dropped, 5);
  assert.equal(l.requests[0].url, 'https://a.test/4');
  // Events of a request the ring let go are ignored.
  done(log, 'r0', 200);
  assert.equal(log.list(1).requests.length, 5);
});

test('old generations are let go past the navigations a listing may reach', () => {
  const log = new TabLog();
  for (let g = 1; g <= 15; g++) sent(log, 'L' + g, `https://a.test/${g}`, { type: 'Document', loaderId: 'L' + g });
  assert.equal(log.ring.length, 10);
  assert.equal(log.list(10).requests[0].url, 'https://a.test/6');
});

test('bodies: text only, capped on a character boundary', () => {
  assert.deepEqual(textBody('text/plain', 'hello', false, 3), { text: 'hel', size: 5, truncated: true });
  assert.deepEqual(textBody('text/plain', 'aé', false, 2), { text: 'a', size: 3, truncated: true });
  assert.deepEqual(textBody('application/json', Buffer.from('{"a":1}').toString('base64'), true), { text: '{"a":1}', size: 7, truncated: false });
  assert.match(textBody('image/png', 'iVBORw0KGgo=', true).note, /not text/);
  assert.match(textBody('', Buffer.from([0xff, 0xfe]).toString('base64'), true).note, /not UTF-8/);
  const big = 'x'.repeat(MAX_BODY_BYTES * 2);
  const r = textBody('text/plain', big, false, MAX_BODY_BYTES * 10);
  assert.equal(r.text.length, MAX_BODY_BYTES);
  assert.equal(r.truncated, true);
});

test('NetLogs keeps a log per tab and ignores other domains and bad events', () => {
  const logs = new NetLogs();
  logs.onEvent(1, 'Network.requestWillBeSent', { requestId: 'a', type: 'Fetch', request: { url: 'https://a.test/' } });
  logs.onEvent(2, 'Page.frameNavigated', {});
  logs.onEvent(1, 'Network.responseReceived', null);
  assert.equal(logs.tab(1).list(1).requests.length, 1);
  assert.equal(logs.tab(2).list(1).requests.length, 0);
  logs.forget(1);
  assert.equal(logs.tab(1).list(1).requests.length, 0);
});

test('an entry is the document\'s of the frame that made it; a navigation the document it loads', () => {
  const log = new TabLog({ now: () => 1 });
  sent(log, 'm', 'https://a.test/', { type: 'Document', loaderId: 'm' });
  log.onEvent('Page.frameNavigated', { frame: { id: MAIN, url: 'https://a.test/', securityOrigin: 'https://a.test' } }, MAIN);
  sent(log, 'd', 'https://evil.test/ad?token=t', { type: 'Document', loaderId: 'd', frameId: 'E' });
  log.onEvent('Page.frameNavigated', { frame: { id: 'E', parentId: MAIN, url: 'https://evil.test/ad?token=t', securityOrigin: 'https://evil.test' } }, MAIN);
  log.onEvent('Page.frameNavigated', { frame: { id: 'S', parentId: 'E', url: 'about:srcdoc', securityOrigin: 'https://evil.test' } }, MAIN);
  sent(log, 'x', 'https://a.test/xhr', { frameId: 'E' });
  sent(log, 'y', 'https://a.test/own', { frameId: MAIN });
  sent(log, 'z', 'https://a.test/srcdoc', { frameId: 'S' });
  sent(log, 'u', 'https://a.test/unknown', { frameId: 'U' });
  const docs = Object.fromEntries(log.list(1).requests.map((r) => [r.url, r.doc]));
  assert.deepEqual(docs, {
    'https://a.test/': { url: 'https://a.test/', main: true },
    'https://evil.test/ad?token=t': { url: 'https://evil.test/ad?token=t', main: false },
    'https://a.test/xhr': { url: 'https://evil.test/ad?token=t', origin: 'https://evil.test', main: false },
    'https://a.test/own': { url: 'https://a.test/', origin: 'https://a.test', main: true },
    'https://a.test/srcdoc': { url: 'about:srcdoc', origin: 'https://evil.test', main: false },
    'https://a.test/unknown': undefined,
  });
});

test('a blank that came without a document request starts a generation', () => {
  const log = new TabLog({ now: () => 1 });
  sent(log, 'm', 'https://evil.test/?token=t', { type: 'Document', loaderId: 'm' });
  log.onEvent('Page.frameNavigated', { frame: { id: MAIN, url: 'https://evil.test/?token=t', securityOrigin: 'https://evil.test' } }, MAIN);
  sent(log, 'x', 'https://evil.test/api');
  assert.equal(log.list(1).requests.length, 2);
  log.onEvent('Page.frameNavigated', { frame: { id: MAIN, url: 'about:blank', securityOrigin: 'null' } }, MAIN);
  assert.equal(log.nav, 2);
  assert.deepEqual(log.list(1).requests, []);
  // a same-document navigation is no blank
  log.onEvent('Page.frameNavigated', { frame: { id: MAIN, url: 'https://a.test/', securityOrigin: 'https://a.test' } }, MAIN);
  assert.equal(log.nav, 2);
});
