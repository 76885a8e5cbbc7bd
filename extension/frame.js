// The frame codec of wire protocol v1: one JSON object per WebSocket text
// message, every frame with v: 1 and a type. Pure: no chrome.*, no socket.

export const VERSION = 1;

// MAX_FRAME_BYTES bounds one inbound frame (the server's own limit for what
// it reads is the same).
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;

// Close codes (PROTOCOL.md).
export const CLOSE = Object.freeze({
  PROTOCOL: 4400,
  UNAUTHORIZED: 4401,
  SUPERSEDED: 4409,
  ROTATED: 4410,
});

// Types whose frames must carry an id.
const NEEDS_ID = new Set(['command', 'result', 'error', 'cancel', 'ping', 'pong', 'decide', 'decision']);

// validate returns why frame is not a well-formed v1 frame, or '' when it is.
export function validate(frame) {
  if (frame === null || typeof frame !== 'object' || Array.isArray(frame)) return 'frame is not a JSON object';
  if (frame.v !== VERSION) return `frame has version ${JSON.stringify(frame.v)}, want ${VERSION}`;
  if (typeof frame.type !== 'string' || frame.type === '') return 'frame has no type';
  if (NEEDS_ID.has(frame.type) && (typeof frame.id !== 'string' || frame.id === '')) return `${frame.type} frame has no id`;
  if (frame.type === 'command' && (typeof frame.method !== 'string' || frame.method === '')) return 'command frame has no method';
  if (frame.type === 'error' && (frame.error === null || typeof frame.error !== 'object')) return 'error frame has no error';
  if (frame.type === 'decide' && (frame.request === null || typeof frame.request !== 'object')) return 'decide frame has no request';
  return '';
}

// byteLength is the UTF-8 size of s, computed only when it could matter.
function overLimit(s, limit) {
  if (s.length > limit) return true;
  if (s.length * 3 <= limit) return false;
  return new TextEncoder().encode(s).length > limit;
}

// decode parses one inbound message. It returns {frame} or {error, close}:
// the close code the socket must be closed with (4400; the server sends
// nothing the extension must answer with 4401).
export function decode(data, limit = MAX_FRAME_BYTES) {
  if (typeof data !== 'string') return { error: 'frame is not a text message', close: CLOSE.PROTOCOL };
  if (overLimit(data, limit)) return { error: `frame is over the ${limit} byte limit`, close: CLOSE.PROTOCOL };
  let frame;
  try {
    frame = JSON.parse(data);
  } catch (e) {
    return { error: 'frame is not valid JSON', close: CLOSE.PROTOCOL };
  }
  const why = validate(frame);
  if (why) return { error: why, close: CLOSE.PROTOCOL };
  return { frame };
}

// encode serialises an outbound frame, adding v. It throws when the frame is
// malformed or has no JSON form (a BigInt, a cycle): the caller decides what
// to send instead.
export function encode(frame) {
  const out = { v: VERSION, ...frame };
  const why = validate(out);
  if (why) throw new Error('encode: ' + why);
  const text = JSON.stringify(out);
  if (typeof text !== 'string') throw new Error('encode: frame has no JSON form');
  return text;
}

// Frame builders for what the extension sends.
export const frames = Object.freeze({
  hello: (auth, ext) => ({ v: VERSION, type: 'hello', ...auth, ext }),
  result: (id, data) => ({ v: VERSION, type: 'result', id, data: data === undefined ? {} : data }),
  error: (id, error) => ({ v: VERSION, type: 'error', id, error }),
  ping: (id) => ({ v: VERSION, type: 'ping', id }),
  pong: (id) => ({ v: VERSION, type: 'pong', id }),
  event: (event, data) => ({ v: VERSION, type: 'event', event, data }),
});
