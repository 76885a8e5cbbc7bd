// shim-globsync.mjs: lets @modelcontextprotocol/conformance (pinned in
// package-lock.json) run on Node 20.
//
// The suite's dist/index.js imports globSync from "fs", which Node has only
// from 22 on; on Node 20 the import fails before the CLI parses its
// arguments. Its one use is listing `**/checks.json` under a results
// directory (the summary over a run's results). This script, run by
// `make conformance-deps` after `npm ci`, drops `globSync as a` from that
// import and appends a function `a(pattern, {cwd})` that walks the directory
// instead and answers that one pattern only (any other pattern throws).
//
// The rule: the patch is exact or it fails. The import must appear once,
// and the call exactly once, in the shape this script knows; otherwise it
// exits non-zero naming what changed, so a version bump cannot skip it
// quietly. Running it again on a patched file changes nothing.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const file = join(here, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
const marker = "/* chromegate: globSync shim (e2e/testdata/conformance/shim-globsync.mjs) */";
const importFrom = "import{existsSync as i,globSync as a,mkdtempSync as o,";
const importTo = "import{existsSync as i,mkdtempSync as o,";
const call = "a(`**/checks.json`,{cwd:e})";
const shim = `
${marker}
import{readdirSync as __chromegateReaddir}from"fs";
function a(pattern,options){
  if(pattern!=="**/checks.json")throw new Error("chromegate globSync shim: only **/checks.json is supported, not "+pattern);
  const root=options.cwd,out=[];
  const walk=rel=>{
    for(const d of __chromegateReaddir(rel?root+"/"+rel:root,{withFileTypes:true})){
      const p=rel?rel+"/"+d.name:d.name;
      if(d.isDirectory())walk(p);else if(d.name==="checks.json")out.push(p);
    }
  };
  walk("");
  return out.sort();
}
`;

function fail(why) {
  console.error(`shim-globsync: ${file}: ${why}; the suite changed shape, update this script`);
  process.exit(1);
}

function count(s, sub) {
  return s.split(sub).length - 1;
}

let src;
try {
  src = readFileSync(file, "utf8");
} catch (err) {
  fail(`cannot read it (${err.message})`);
}

if (src.includes(marker)) {
  if (src.includes("globSync as") || count(src, importTo) !== 1 || count(src, call) !== 1 || count(src, marker) !== 1) {
    fail("marked as patched but not in the patched shape");
  }
  process.exit(0);
}
if (count(src, "globSync") !== 1) fail(`globSync appears ${count(src, "globSync")} times, expected once (in the import)`);
if (count(src, importFrom) !== 1) fail(`the fs import is not ${JSON.stringify(importFrom)}`);
if (count(src, call) !== 1) fail(`the call ${call} appears ${count(src, call)} times, expected once`);

writeFileSync(file, src.replace(importFrom, importTo) + shim);
console.log("shim-globsync: patched " + file);
