// Page-tool discovery in a page's main world, where WebMCP polyfills and
// @mcp-b/global live (see executor.PageToolsScript). The backend calls it as
// fn({key, op, ...}); its state lives on globalThis[key] (key is random per
// browser session) for the life of the document. Every op answers with one
// JSON text (a string), never more than the op's limit long:
//   list                              → {tools, sig}
//   wait {sig, ms}                    → {tools, sig} once the list is not sig, or after ms
//   call {id, surface, name, input, ms, max} → {ok: true, output, size, cut} | {ok: false, error} | {ok: false, missing: true} | {ok: false, timeout: true}
//   cancel {id}                       → true
//   mcp {method, params, max}         → {ok: true, result, size, cut} | {ok: false, error}
// Sizes are bounded here, before anything crosses to the server: a tool's
// schema over 32 KiB is dropped (tooLarge), a list stops at its budget, a
// result longer than max is cut (cut, and size = its whole JSON length).
// The page can replace every built-in this script calls, so the last check
// is on the answer's length, a property of a primitive string that no page
// can change; the server checks everything again on its side.
// Surfaces: "inpage" is document.modelContext or navigator.modelContext
// (getTools/executeTool or listTools/callTool) and
// navigator.modelContextTesting (listTools/executeTool(name, json)); with
// skipNative, objects whose methods are the browser's own are left to the
// CDP WebMCP domain. "mcpb" is the MCP server of @mcp-b/global, reached as an
// MCP client over its TabServerTransport (postMessage on channel
// mcp-default); responses are broadcast, so ids are unique strings and
// every id this script did not send is ignored.
// Page code can see and change all of this. chromegate takes nothing from
// here but tool data, and checks its shape again on its side.
(arg) => {
  const CH = 'mcp-default';
  const key = String(arg.key);
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const within = (p, ms, what) => Promise.race([p, sleep(ms).then(() => { throw new Error(what + ' did not answer within ' + ms + ' ms'); })]);
  const errText = (e) => {
    try {
      return String(e && typeof e.message === 'string' ? e.message : e).slice(0, 2000);
    } catch (x) {
      return 'the page tool failed';
    }
  };
  // bound serialises v as JSON text of about max characters at most: the
  // whole of it when it fits, else a copy with strings cut (to maxStr
  // each, and to what is left of the budget) and items left out once the
  // budget is spent, so the text stays JSON a reader can use.
  const bound = (v, max, maxStr) => {
    let whole;
    try {
      whole = JSON.stringify(v === undefined ? null : v);
    } catch (e) {
      whole = JSON.stringify(errText(v));
    }
    if (typeof whole !== 'string') whole = 'null';
    const size = whole.length;
    if (size <= max) return { json: whole, size, cut: false };
    let budget = max;
    const strCap = Math.min(maxStr || max, max);
    const shrink = (x, depth) => {
      if (budget <= 0) return null;
      if (typeof x === 'string') {
        const s = x.length > Math.min(strCap, budget) ? x.slice(0, Math.max(0, Math.min(strCap, budget))) + '…' : x;
        budget -= s.length + 2;
        return s;
      }
      if (x === null || typeof x !== 'object') {
        budget -= 8;
        return typeof x === 'number' || typeof x === 'boolean' ? x : null;
      }
      if (depth > 32) {
        budget -= 4;
        return null;
      }
      if (Array.isArray(x)) {
        const out = [];
        for (let i = 0; i < x.length && budget > 0; i++) out.push(shrink(x[i], depth + 1));
        return out;
      }
      const out = {};
      for (const k of Object.keys(x)) {
        if (budget <= 0) break;
        budget -= Math.min(k.length, 256) + 3;
        out[k.slice(0, 256)] = shrink(x[k], depth + 1);
      }
      return out;
    };
    let json;
    try {
      json = JSON.stringify(shrink(JSON.parse(whole), 0));
    } catch (e) {
      json = null;
    }
    if (typeof json !== 'string' || json.length > 2 * max + 1024) json = JSON.stringify(whole.slice(0, max));
    if (typeof json !== 'string' || json.length > 6 * max + 1024) json = 'null';
    return { json, size, cut: true };
  };
  // answer is what every op returns: one JSON text of at most limit
  // characters (see the head of this file).
  const answer = (v, limit) => {
    let out;
    try {
      out = JSON.stringify(v);
    } catch (e) {
      out = null;
    }
    if (typeof out !== 'string' || out.length > limit) {
      return '{"ok":false,"error":"the page-tool script could not bound its answer"}';
    }
    return out;
  };
  // digest stands for a list in sig: two 32-bit hashes of its JSON.
  const digest = (text) => {
    let a = 0x811c9dc5;
    let b = 5381;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = (Math.imul(b, 33) + c) | 0;
    }
    return text.length + ':' + (a >>> 0).toString(36) + (b >>> 0).toString(36);
  };
  const SCHEMA_MAX = 32768;
  const LIST_BUDGET = 2 << 20;
  const isNative = (f) => {
    try {
      return /\{\s*\[native code\]\s*\}\s*$/.test(Function.prototype.toString.call(f));
    } catch (e) {
      return false;
    }
  };

  const install = () => {
    const m = { ready: false, init: null, caps: null, pending: new Map(), n: 0, tools: [], res: 0 };
    const st = { m, via: new Map(), calls: new Map() };
    const post = (payload) => window.postMessage({ channel: CH, type: 'mcp', direction: 'client-to-server', payload }, '*');
    m.request = (method, params, ms, callID) => new Promise((resolve) => {
      const id = key + '-' + (++m.n);
      const timer = setTimeout(() => {
        m.pending.delete(id);
        resolve({ error: { message: 'the page MCP server did not answer ' + method } });
      }, ms);
      m.pending.set(id, (p) => {
        clearTimeout(timer);
        if (callID) st.calls.delete(callID);
        resolve(p);
      });
      if (callID) st.calls.set(callID, id);
      post({ jsonrpc: '2.0', id, method, params: params || {} });
    });
    m.cancel = (id) => post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'cancelled by chromegate' } });
    m.refresh = async () => {
      if (!m.caps || !m.caps.tools) {
        m.tools = [];
        return;
      }
      const r = await m.request('tools/list', {}, 5000);
      m.tools = r && r.result && Array.isArray(r.result.tools) ? r.result.tools : [];
    };
    m.connect = () => {
      if (m.init) return m.init;
      m.init = (async () => {
        const r = await m.request('initialize', {
          protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'chromegate', version: '1' },
        }, 5000);
        if (!r || !r.result || typeof r.result !== 'object') {
          m.init = null;
          return false;
        }
        m.caps = r.result.capabilities || {};
        post({ jsonrpc: '2.0', method: 'notifications/initialized' });
        await m.refresh();
        m.res++; // its resources and prompts are there to list
        return true;
      })();
      return m.init;
    };
    window.addEventListener('message', (e) => {
      if (e.source !== window) return;
      const d = e.data;
      if (!d || typeof d !== 'object' || d.channel !== CH || d.type !== 'mcp' || d.direction !== 'server-to-client') return;
      const p = d.payload;
      if (p === 'mcp-server-ready') {
        m.ready = true;
        m.connect();
        return;
      }
      if (p === 'mcp-server-stopped') {
        m.ready = false;
        m.init = null;
        m.caps = null;
        m.tools = [];
        m.res++;
        return;
      }
      if (!p || typeof p !== 'object') return;
      if (typeof p.id === 'string' && m.pending.has(p.id)) {
        const done = m.pending.get(p.id);
        m.pending.delete(p.id);
        done(p);
        return;
      }
      if (p.method === 'notifications/tools/list_changed') m.refresh();
      else if (p.method === 'notifications/resources/list_changed' || p.method === 'notifications/prompts/list_changed') m.res++;
    });
    post('mcp-check-ready');
    return st;
  };

  let st = globalThis[key];
  if (!st) {
    st = install();
    Object.defineProperty(globalThis, key, { value: st, enumerable: false });
  }
  const m = st.m;

  const sources = () => {
    const out = [];
    let dm, nm, tm;
    try {
      dm = document.modelContext;
      nm = navigator.modelContext;
      tm = navigator.modelContextTesting;
    } catch (e) {
      return out;
    }
    for (const obj of [dm, nm]) {
      if (!obj || (typeof obj !== 'object' && typeof obj !== 'function') || out.some((s) => s.obj === obj)) continue;
      if (typeof obj.getTools === 'function') {
        if (!(arg.skipNative && isNative(obj.getTools))) out.push({ obj, list: 'getTools', byTool: true });
      } else if (typeof obj.listTools === 'function' && typeof obj.callTool === 'function') {
        out.push({ obj, list: 'listTools', call: 'callTool' });
      }
    }
    if (tm && typeof tm.listTools === 'function' && typeof tm.executeTool === 'function' && !(arg.skipNative && isNative(tm.listTools))) {
      out.push({ obj: tm, list: 'listTools', call: 'executeTool', json: true });
    }
    return out;
  };

  const describe = (t, surface) => {
    try {
      if (!t || typeof t !== 'object') return null;
      const name = t.name;
      if (typeof name !== 'string' || !/^[A-Za-z0-9_.-]{1,128}$/.test(name)) return null;
      const str = (v, n) => (typeof v === 'string' ? v.slice(0, n) : '');
      let schema = t.inputSchema;
      if (typeof schema === 'string') {
        try {
          schema = JSON.parse(schema);
        } catch (e) {
          schema = null;
        }
      }
      let tooLarge = false;
      if (schema && typeof schema === 'object' && !Array.isArray(schema)) {
        const b = bound(schema, SCHEMA_MAX);
        tooLarge = b.cut;
        schema = b.cut ? null : JSON.parse(b.json);
      } else {
        schema = null;
      }
      const a = t.annotations && typeof t.annotations === 'object' ? t.annotations : {};
      const flag = (x, y) => a[x] === true || a[y] === true;
      return {
        surface, name, title: str(t.title, 200), description: str(t.description, 2000), inputSchema: schema, tooLarge,
        annotations: {
          readOnly: flag('readOnlyHint', 'readOnly'),
          untrustedContent: flag('untrustedContentHint', 'untrustedContent'),
          consequential: flag('consequentialHint', 'consequential'),
          destructive: flag('destructiveHint', 'destructive'),
        },
      };
    } catch (e) {
      return null;
    }
  };

  const collect = async () => {
    const tools = [];
    const via = new Map();
    let spent = 0;
    // fits takes a described tool into the list's budget.
    const fits = (d) => {
      spent += JSON.stringify(d).length;
      return spent <= LIST_BUDGET;
    };
    for (const src of sources()) {
      let list;
      try {
        list = await within(Promise.resolve(src.obj[src.list]()), 2000, src.list);
      } catch (e) {
        continue;
      }
      if (!Array.isArray(list)) continue;
      for (const t of list.slice(0, 200)) {
        const d = describe(t, 'inpage');
        if (!d || via.has(d.name) || !fits(d)) continue;
        via.set(d.name, { src, tool: t });
        tools.push(d);
      }
    }
    st.via = via;
    for (const t of m.tools.slice(0, 200)) {
      const d = describe(t, 'mcpb');
      if (d && fits(d)) tools.push(d);
    }
    return { tools, sig: digest(JSON.stringify(tools)) + '|' + m.res, res: m.res };
  };

  // result is a tool's output, bounded to the call's max.
  const result = (out, a) => {
    const b = bound(out, a.max);
    return { ok: true, output: b.json, size: b.size, cut: b.cut };
  };

  const call = async (a) => {
    const input = a.input && typeof a.input === 'object' ? a.input : {};
    if (a.surface === 'mcpb') {
      if (!m.ready || !(await m.connect())) return { ok: false, missing: true };
      const r = await m.request('tools/call', { name: a.name, arguments: input }, 600000, a.id);
      if (!r || r.error || !r.result) return { ok: false, error: errText(r && r.error ? r.error.message : 'no result') };
      return result(r.result, a);
    }
    let v = st.via.get(a.name);
    if (!v) {
      await collect();
      v = st.via.get(a.name);
    }
    if (!v) return { ok: false, missing: true };
    const { src, tool } = v;
    try {
      let out;
      if (src.json) {
        out = await src.obj[src.call](a.name, JSON.stringify(input));
      } else if (src.byTool) {
        try {
          out = await src.obj.executeTool(tool, input);
        } catch (e) {
          // An implementation that takes the input as a JSON string
          // refuses the object before the tool runs, naming executeTool.
          if (!(e instanceof TypeError) || !/executeTool/.test(errText(e))) throw e;
          out = await src.obj.executeTool(tool, JSON.stringify(input));
        }
      } else {
        out = await src.obj[src.call](a.name, input);
      }
      if (typeof out === 'string') {
        try {
          out = JSON.parse(out);
        } catch (e) {
          // a plain string result
        }
      }
      return result(out, a);
    } catch (e) {
      return { ok: false, error: errText(e) };
    }
  };

  // max is the call's bound on a result; limit the op's on its answer.
  const max = Math.max(1, Math.min(Number(arg.max) || 100000, 4 << 20));
  const run = () => {
    switch (arg.op) {
      case 'list':
        return collect();
      case 'wait':
        return (async () => {
          const end = Date.now() + Math.max(0, Number(arg.ms) || 0);
          for (;;) {
            const r = await collect();
            if (r.sig !== arg.sig || Date.now() >= end) return r;
            await sleep(Math.min(250, Math.max(1, end - Date.now())));
          }
        })();
      case 'call':
        // Bounded here, so a tool that never settles does not hold the
        // backend's evaluation (and its goroutine) forever.
        return Promise.race([call(Object.assign({}, arg, { max })), sleep(Math.max(1, Number(arg.ms) || 30000)).then(() => ({ ok: false, timeout: true }))]);
      case 'cancel': {
        const id = st.calls.get(arg.id);
        if (id) m.cancel(id);
        return true;
      }
      case 'mcp':
        return (async () => {
          if (!m.ready) {
            window.postMessage({ channel: CH, type: 'mcp', direction: 'client-to-server', payload: 'mcp-check-ready' }, '*');
            await sleep(50);
          }
          if (!m.ready || !(await m.connect())) return { ok: false, error: 'this page runs no MCP server (@mcp-b/global)' };
          const r = await m.request(String(arg.method), arg.params, 30000);
          if (!r || r.error || !r.result) return { ok: false, error: errText(r && r.error ? r.error.message : 'no result') };
          // A list's items are cut one by one, so a long one does not
          // crowd out the rest.
          const b = bound(r.result, max, /\/list$/.test(String(arg.method)) ? 2048 : max);
          return { ok: true, result: b.json, size: b.size, cut: b.cut };
        })();
    }
    return null;
  };
  const limit = arg.op === 'list' || arg.op === 'wait' ? 2 * LIST_BUDGET : 8 * max + 65536;
  return Promise.resolve(run()).then((v) => answer(v, limit), (e) => answer({ ok: false, error: errText(e) }, 4096));
}
