// Cookies between the wire's form (executor.Cookie) and CDP's.

import { fail } from './errors.js';

export function toCDPCookie(c, i) {
  const pre = `cookie ${i} (${JSON.stringify(c && c.name)}): `;
  if (!c || typeof c !== 'object') throw fail('BAD_ARGS', `cookie ${i} is not an object`);
  if (!c.name) throw fail('BAD_ARGS', pre + 'the name is empty');
  const out = { name: String(c.name), value: String(c.value ?? '') };
  if (c.url && (c.domain || c.path)) throw fail('BAD_ARGS', pre + 'url and domain/path exclude each other', 'scope the cookie by url, or by domain and path');
  if (c.url) {
    try {
      const u = new URL(c.url);
      if (!u.host) throw new Error();
    } catch {
      throw fail('BAD_ARGS', pre + `url ${JSON.stringify(c.url)} is not an absolute URL`);
    }
    out.url = c.url;
  } else if (c.domain && c.path) {
    out.domain = c.domain;
    out.path = c.path;
  } else {
    throw fail('BAD_ARGS', pre + 'it needs a url, or a domain and a path', 'for example {"name":"a","value":"1","url":"https://example.com/"}');
  }
  if (c.expires > 0) out.expires = c.expires;
  if (c.httpOnly) out.httpOnly = true;
  if (c.secure) out.secure = true;
  if (c.sameSite) {
    const s = { strict: 'Strict', lax: 'Lax', none: 'None' }[String(c.sameSite).toLowerCase()];
    if (!s) throw fail('BAD_ARGS', pre + `sameSite ${JSON.stringify(c.sameSite)} is not Strict, Lax or None`);
    out.sameSite = s;
  }
  return out;
}

export function fromCDPCookie(c) {
  const out = { name: c.name, value: c.value, domain: c.domain, path: c.path, expires: c.expires };
  if (c.httpOnly) out.httpOnly = true;
  if (c.secure) out.secure = true;
  if (c.sameSite) out.sameSite = c.sameSite;
  return out;
}
