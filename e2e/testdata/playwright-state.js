// playwright-state: Playwright itself writing and reading a storage state,
// for TestStorageStatePlaywright. Every page is routed to a blank document:
// nothing leaves the browser.
//
//   node playwright-state.js PLAYWRIGHT_CORE CHROMIUM write ORIGIN FILE TOKEN SID
//     logs in as the notes app would (cookie, localStorage, IndexedDB) and
//     saves the state with storageState({path, indexedDB: true});
//   node playwright-state.js PLAYWRIGHT_CORE CHROMIUM read ORIGIN FILE
//     starts a context from FILE and prints what ORIGIN holds as JSON:
//     {token, theme, draft, cookies: ["name=value"]}.
"use strict";
const [, , core, exe, mode, origin, file, token, sid] = process.argv;
const { chromium } = require(core);

const blank = (route) => route.fulfill({ body: "<html></html>", contentType: "text/html" });

async function main() {
  const browser = await chromium.launch({ executablePath: exe, args: ["--no-sandbox", "--disable-gpu"] });
  try {
    if (mode === "write") {
      const ctx = await browser.newContext();
      await ctx.addCookies([{ name: "notes_sid", value: sid, domain: new URL(origin).hostname, path: "/",
        httpOnly: true, sameSite: "Lax", expires: Math.floor(Date.now() / 1000) + 3600 }]);
      const page = await ctx.newPage();
      await page.route("**/*", blank);
      await page.goto(origin + "/");
      await page.evaluate(async (t) => {
        localStorage.setItem("notes-token", t);
        await new Promise((resolve, reject) => {
          const open = indexedDB.open("notes-db", 1);
          open.onupgradeneeded = () => open.result.createObjectStore("prefs", { keyPath: "id" });
          open.onerror = () => reject(open.error);
          open.onsuccess = () => {
            const tx = open.result.transaction("prefs", "readwrite");
            tx.objectStore("prefs").put({ id: 1, theme: "theme-7f3a-dusk" });
            tx.oncomplete = () => resolve();
            tx.onerror = () => reject(tx.error);
          };
        });
      }, token);
      await ctx.storageState({ path: file, indexedDB: true });
      return;
    }
    const ctx = await browser.newContext({ storageState: file });
    const page = await ctx.newPage();
    await page.route("**/*", blank);
    await page.goto(origin + "/");
    const out = await page.evaluate(async () => ({
      token: localStorage.getItem("notes-token"),
      draft: sessionStorage.getItem("notes-draft"),
      theme: await new Promise((resolve) => {
        const open = indexedDB.open("notes-db");
        open.onerror = () => resolve(null);
        open.onsuccess = () => {
          try {
            const req = open.result.transaction("prefs").objectStore("prefs").get(1);
            req.onsuccess = () => resolve(req.result ? req.result.theme : null);
            req.onerror = () => resolve(null);
          } catch (e) {
            resolve(null);
          }
        };
      }),
    }));
    out.cookies = (await ctx.cookies()).map((c) => c.name + "=" + c.value);
    process.stdout.write(JSON.stringify(out));
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
