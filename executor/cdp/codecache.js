// Written by chromegate and preloaded (node --require) into the Playwright
// driver. Node 20 has no compile cache of its own (NODE_COMPILE_CACHE came
// in 22), and the driver parses and compiles some 6 MB of bundled
// JavaScript at every start: this keeps V8's code cache of those bundles
// on disk and hands it back to V8 at the next start, which then skips most
// of the compiling (about a third of the driver's start-up CPU).
//
// Only the driver's own large files are cached. A cache entry is named by
// the hash of Node's version, the file's path and its content, so an
// upgraded driver or node never meets a stale entry; V8 checks the entry
// again (its own version, flags and the source) and rejects one that does
// not fit, and then the file is compiled as without this hook.
'use strict';
const Module = require('module');
const vm = require('vm');
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');

const dir = process.env.CHROMEGATE_CODE_CACHE_DIR;
const root = process.env.CHROMEGATE_CODE_CACHE_ROOT;
const minSize = 100 * 1024;
// V8's cache holds what was compiled when it is made. A driver without an
// entry writes one at once (its start-up's top level), and a driver that
// lives writeAfterMs writes it again, once, covering the code a start and
// a launch run; a marker file says the entry is that full one.
const writeAfterMs = 5000;

// Node 18 (Debian bookworm's) refuses the dynamic-import callback below
// without --experimental-vm-modules, and the driver would not start: the
// cache is for Node 20 and later.
const nodeMajor = Number(process.versions.node.split('.')[0]);

if (dir && root && nodeMajor >= 20) {
  const compile = Module.prototype._compile;
  Module.prototype._compile = function (content, filename) {
    if (typeof filename !== 'string' || !filename.startsWith(root + path.sep) || content.length < minSize) {
      return compile.call(this, content, filename);
    }
    let script, cached;
    const key = crypto.createHash('sha256').update(process.version + '\0' + filename + '\0').update(content).digest('hex').slice(0, 40);
    const file = path.join(dir, key);
    try {
      cached = fs.readFileSync(file);
    } catch {
      cached = undefined;
    }
    try {
      script = new vm.Script(Module.wrap(content), {
        filename,
        cachedData: cached,
        importModuleDynamically: (specifier) => import(specifier),
      });
    } catch {
      return compile.call(this, content, filename);
    }
    if (!cached || script.cachedDataRejected) {
      setImmediate(() => save(script, file, false));
    }
    if (!cached || script.cachedDataRejected || !fs.existsSync(file + '.full')) {
      setTimeout(() => save(script, file, true), writeAfterMs).unref();
    }
    const fn = script.runInThisContext({ displayErrors: true });
    const mod = this;
    const req = (id) => mod.require(id);
    req.resolve = (request, options) => Module._resolveFilename(request, mod, false, options);
    req.resolve.paths = (request) => Module._resolveLookupPaths(request, mod);
    req.main = require.main;
    req.extensions = Module._extensions;
    req.cache = Module._cache;
    return fn.call(mod.exports, mod.exports, req, mod, filename, path.dirname(filename));
  };
}

// save writes the cache atomically (a temporary file renamed), best
// effort: a driver that cannot write it starts as fast as before.
function save(script, file, full) {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = file + '.' + process.pid + '.tmp';
    fs.writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
    fs.renameSync(tmp, file);
    if (full) {
      fs.writeFileSync(file + '.full', '', { mode: 0o600 });
    }
  } catch {
    // best effort
  }
}
