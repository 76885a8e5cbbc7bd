// The popup and options page: pairing state, the connected server and port,
// the attached tabs, Unpair, Reconnect, and manual pairing with a code. It
// reads state from the service worker and never sees the token.

const $ = (id) => document.getElementById(id);

const LABELS = {
  connected: 'connected',
  connecting: 'connecting…',
  disconnected: 'disconnected, retrying',
  unpaired: 'not paired',
  unauthorized: 'pairing refused',
  superseded: 'taken over by another connection',
  idle: 'idle',
};

async function ask(msg) {
  const r = await chrome.runtime.sendMessage(msg);
  if (r && r.error) throw new Error(r.error);
  return r;
}

async function render() {
  let s;
  try {
    s = await ask({ type: 'state' });
  } catch (e) {
    $('msg').textContent = e.message;
    return;
  }
  const st = $('status');
  st.textContent = LABELS[s.status] || s.status;
  st.className = 'status ' + s.status;
  $('reason').textContent = s.reason ? `(${s.reason})` : '';
  $('paired').textContent = s.paired ? `yes, ${s.pairingSource === 'native' ? 'through the native host' : s.pairingSource === 'cdp' ? 'by the server over CDP' : 'with a code'}` : 'no';
  $('server').textContent = s.server && s.server.name ? `${s.server.name} ${s.server.version || ''}`.trim() : '–';
  $('port').textContent = s.port || s.pairedPort || '–';
  $('attached').textContent = s.attachedTabs && s.attachedTabs.length ? s.attachedTabs.join(', ') : 'none';
  $('msg').textContent = s.codeRefused || '';
  if (s.missing && s.missing.length) $('msg').textContent = 'This extension lacks handlers for: ' + s.missing.join(', ');
}

$('unpair').addEventListener('click', async () => {
  $('msg').textContent = '';
  try {
    await ask({ type: 'unpair' });
  } catch (e) {
    $('msg').textContent = e.message;
  }
  render();
});

$('reconnect').addEventListener('click', async () => {
  $('msg').textContent = '';
  await ask({ type: 'reconnect' }).catch((e) => { $('msg').textContent = e.message; });
  render();
});

$('pair').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  $('msg').textContent = '';
  try {
    await ask({ type: 'pairCode', port: Number($('pport').value), code: $('pcode').value });
    $('pcode').value = '';
  } catch (e) {
    $('msg').textContent = e.message;
  }
  render();
});

chrome.storage.onChanged.addListener(() => render());
render();
