// Emulation (the wire method emulate, executor.Emulator): one emulation
// for every tab this extension drives, sent through each tab's debugger
// session as the Go CDP backend sends it (executor/cdp EmulationCommands;
// a golden file of both keeps them in step). A tab the debugger attaches
// to later gets it as it attaches (session.js onAttached), before any call
// uses it; a tab let go of loses it with the debugger. The user's own
// permissions are never changed: a position is emulated, but a page gets
// it only where Chrome already lets that origin ask (chrome.debugger
// cannot grant a permission, and the user's settings are theirs).

// current is the emulation in force, as executor.Emulation's JSON; {} is
// none. It lives with the service worker: a restart ends it (the
// debugger's overrides end with their sessions, which a restart keeps,
// so the tabs then keep what they had until the next emulate).
let current = {};

export function emulation() {
  return current;
}

export function isZero(e) {
  return !e || Object.keys(e).length === 0;
}

// commands are the CDP commands that make a page emulate e from any
// previous state: every override e sets, and the clearing of every one it
// leaves out.
export function commands(e) {
  e = e || {};
  const out = [];
  const add = (method, params) => out.push({ method, params });
  const metrics = (e.width || 0) > 0 || (e.height || 0) > 0 || (e.deviceScaleFactor || 0) > 0 || !!e.mobile;
  if (metrics) {
    add('Emulation.setDeviceMetricsOverride', {
      width: e.width || 0, height: e.height || 0, deviceScaleFactor: e.deviceScaleFactor || 1, mobile: !!e.mobile,
      screenWidth: e.width || 0, screenHeight: e.height || 0,
    });
  } else {
    add('Emulation.clearDeviceMetricsOverride', {});
  }
  add('Emulation.setTouchEmulationEnabled', e.touch ? { enabled: true, maxTouchPoints: 5 } : { enabled: false });
  const ua = { userAgent: e.userAgent || '' };
  if (e.locale) ua.acceptLanguage = e.locale;
  add('Emulation.setUserAgentOverride', ua);
  if (e.geolocation) {
    const g = e.geolocation;
    add('Emulation.setGeolocationOverride', { latitude: g.latitude, longitude: g.longitude, accuracy: g.accuracy });
  } else {
    add('Emulation.clearGeolocationOverride', {});
  }
  add('Emulation.setTimezoneOverride', { timezoneId: e.timezone || '' });
  add('Emulation.setLocaleOverride', e.locale ? { locale: e.locale } : {});
  add('Emulation.setEmulatedMedia', {
    features: [
      { name: 'prefers-color-scheme', value: e.colorScheme || '' },
      { name: 'prefers-reduced-motion', value: e.reducedMotion || '' },
    ],
  });
  add('Emulation.setCPUThrottlingRate', { rate: Math.max(1, e.cpuThrottling || 0) });
  const n = e.network || {};
  add('Network.emulateNetworkConditions', {
    offline: !!n.offline, latency: n.latencyMs || 0,
    downloadThroughput: n.downloadBps || -1, uploadThroughput: n.uploadBps || -1,
  });
  return out;
}

// apply sends e's commands through send(method, params).
export async function apply(send, e) {
  for (const c of commands(e)) {
    await send(c.method, c.params);
  }
}

// set makes e the emulation in force and sends it to each of tabs
// (send(tabId, method, params)); a tab that closed meanwhile is skipped.
// The position's origin is not the extension's to grant: it is left out.
export async function set(e, tabs, send) {
  const next = { ...(e || {}) };
  delete next.geoOrigin;
  current = next;
  for (const id of tabs) {
    try {
      await apply((m, p) => send(id, m, p), next);
    } catch (err) {
      if (err && (err.code === 'TAB_NOT_FOUND' || err.code === 'DETACHED')) continue;
      throw err;
    }
  }
  return current;
}
