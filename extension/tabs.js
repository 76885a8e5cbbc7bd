// Tabs through chrome.tabs: listing, the selected tab, opening, closing.
// The selection lives in chrome.storage.session (a restarted service worker
// keeps it); chrome.tabs is always asked for the rest.

import { fail } from './errors.js';

const SELECTION_KEY = 'selection'; // tab ids, most recently selected last

async function selection() {
  const got = await chrome.storage.session.get(SELECTION_KEY);
  return Array.isArray(got[SELECTION_KEY]) ? got[SELECTION_KEY] : [];
}

async function setSelection(list) {
  await chrome.storage.session.set({ [SELECTION_KEY]: list.slice(-50) });
}

// markSelected makes id the selected tab.
export async function markSelected(id) {
  const list = (await selection()).filter((x) => x !== id);
  list.push(id);
  await setSelection(list);
}

// forget drops a closed tab from the selection history.
export async function forget(id) {
  const list = await selection();
  if (list.includes(id)) await setSelection(list.filter((x) => x !== id));
}

let hidden = () => false;

// setHidden sets which tabs are not listed: popups whose first page the
// request boundary is still deciding (egress.js).
export function setHidden(fn) {
  hidden = fn;
}

// isHidden reports whether a tab is kept out of listings (setHidden).
export function isHidden(id) {
  return hidden(id);
}

// usable reports whether a tab can be listed and driven: a real tab of a
// normal window.
function usable(t) {
  return t && typeof t.id === 'number' && t.id >= 0 && !hidden(t.id);
}

// all returns the open tabs in creation (id) order.
export async function all() {
  const list = await chrome.tabs.query({});
  return list.filter(usable).sort((a, b) => a.id - b.id);
}

// selectedId returns the selected tab's id, choosing one when the selected
// tab closed: the most recently selected still open, else the tab accessed
// last, else the newest tab. null when there is no tab.
export async function selectedId() {
  const open = await all();
  if (!open.length) return null;
  const ids = new Set(open.map((t) => t.id));
  const hist = await selection();
  for (let i = hist.length - 1; i >= 0; i--) {
    if (ids.has(hist[i])) return hist[i];
  }
  // the tab the user looked at last (lastAccessed, Chrome 121+), else the newest
  let pick = open[open.length - 1];
  for (const t of open) {
    if ((t.lastAccessed || 0) > (pick.lastAccessed || 0)) pick = t;
  }
  await markSelected(pick.id);
  return pick.id;
}

// parseId reads a raw tab id of the wire ("123").
export function parseId(raw) {
  if (typeof raw !== 'string' || !/^[0-9]{1,10}$/.test(raw)) {
    throw fail('TAB_NOT_FOUND', `${JSON.stringify(raw)} is not a tab id`, 'call tabs_list to see the open tabs');
  }
  return Number(raw);
}

// get returns chrome's tab for id, or TAB_NOT_FOUND.
export async function get(id) {
  try {
    const t = await chrome.tabs.get(id);
    if (usable(t)) return t;
  } catch {
    // "No tab with id"
  }
  throw fail('TAB_NOT_FOUND', `there is no open tab ${id} (closed, or never opened)`, 'call tabs_list to see the open tabs');
}

// resolve returns the tab id a call acts on: raw "" is the selected tab
// (opening one when no tab is left), anything else must name an open tab.
export async function resolve(raw) {
  if (raw === '' || raw === undefined || raw === null) {
    const id = await selectedId();
    if (id !== null) return id;
    const t = await chrome.tabs.create({ url: 'about:blank', active: true });
    await markSelected(t.id);
    return t.id;
  }
  const id = parseId(raw);
  await get(id);
  return id;
}

// wire turns a chrome tab into the contract's Tab.
export function wire(t, selected) {
  const url = t.url || t.pendingUrl || '';
  const out = { id: String(t.id), url, title: displayTitle(t.title, url) };
  if (selected === t.id) out.selected = true;
  return out;
}

// list is the contract's tab list.
export async function list() {
  const open = await all();
  const sel = open.length ? await selectedId() : null;
  return open.map((t) => wire(t, sel));
}

// select makes a tab selected and brings it to the front.
export async function select(id) {
  const t = await get(id);
  await markSelected(id);
  try {
    await chrome.tabs.update(id, { active: true });
    if (t.windowId !== undefined) await chrome.windows.update(t.windowId, { focused: true });
  } catch {
    // focusing a window can fail headless; the selection stands
  }
  return id;
}

// open creates a tab (about:blank) and selects it; the caller navigates it.
export async function open() {
  const t = await chrome.tabs.create({ url: 'about:blank', active: true });
  await markSelected(t.id);
  return t.id;
}

// close closes a tab; the selection moves on its own (selectedId).
export async function close(id) {
  await get(id);
  try {
    await chrome.tabs.remove(id);
  } catch (e) {
    throw fail('TAB_NOT_FOUND', `closing tab ${id} failed: ${e.message}`, 'call tabs_list to see the open tabs');
  }
  await forget(id);
}

// displayTitle is the document's title: Chrome shows the URL (without its
// scheme) for a page without one, which is not the page's title.
export function displayTitle(title, url) {
  if (!title || title === url || title === url.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '')) return '';
  return title;
}
