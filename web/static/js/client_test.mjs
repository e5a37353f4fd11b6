// Checks what a page keeps for its reload. Run: node client_test.mjs
import { isDeepStrictEqual } from 'node:util';
import { Client, ROOT, KEPT_KEY, takeKept, leaveKept } from './client.js';

const cases = [];
const check = (name, got, want) => cases.push([name, isDeepStrictEqual(got, want), got, want]);

// A sessionStorage in memory; full makes setItem throw past that many characters.
class Storage {
  constructor(full = Infinity) { this.items = new Map(); this.full = full; }
  getItem(k) { return this.items.has(k) ? this.items.get(k) : null; }
  setItem(k, v) {
    if (v.length > this.full) throw new Error('QuotaExceededError');
    this.items.set(k, String(v));
  }
  removeItem(k) { this.items.delete(k); }
}

const mirror = (c, uri, kind, state, pending = []) => {
  c.mirrors.set(uri, { uri, kind, confirmed: state, pending, listeners: new Set(), taps: new Set() });
};

const c = new Client({ url: '/' });
check('a page without a kept identity makes a clientId', typeof c.clientId === 'string' && c.clientId.length === 36, true);
check('before a connection only the identity is kept', c.keep(), { clientId: c.clientId, clientSeq: 0, lastSeq: 0, protocolVersion: '', channels: [] });

c.protocolVersion = '1.1.0';
c.lastSeq = 41;
c.clientSeq = 7;
c.initResult = { protocolVersion: '1.1.0', serverSeq: 3, snapshots: [{ resource: ROOT }], defaultDirectory: 'file:///home' };
const draft = { clientSeq: 7, action: { type: 'chat/draftChanged', draft: { text: 'hi' } } };
mirror(c, 'ahp-terminal:/t', 'terminal', { content: [] });
mirror(c, 'ahp-chat:/c', 'chat', { turns: [] }, [draft]);
mirror(c, ROOT, 'root', { agents: [] });
const kept = c.keep();
check('the root is kept first, terminals are not kept', kept.channels.map((ch) => ch.uri), [ROOT, 'ahp-chat:/c']);
check('pending actions are kept', kept.channels[1].pending, [draft]);
check('the sequence numbers and the version are kept', [kept.clientSeq, kept.lastSeq, kept.protocolVersion], [7, 41, '1.1.0']);
check('the initialize result is kept without its snapshots', kept.initResult, { protocolVersion: '1.1.0', serverSeq: 3, defaultDirectory: 'file:///home' });

const s = new Storage();
leaveKept(s, kept);
const back = takeKept(s);
check('what is left is taken back whole', back, JSON.parse(JSON.stringify(kept)));
check('and is gone from the storage once taken', s.getItem(KEPT_KEY), null);
check('a second take finds nothing', takeKept(s), null);

const r = new Client({ url: '/', kept: back });
check('a page started from it is the same client', [r.clientId, r.clientSeq], [c.clientId, 7]);

const small = new Storage(200);
leaveKept(small, { ...kept, channels: [{ ...kept.channels[1], state: { text: 'x'.repeat(500) } }] });
check('a storage too small for the states gets the identity alone', takeKept(small),
  { clientId: c.clientId, clientSeq: 7, lastSeq: 0, protocolVersion: '', channels: [] });

const bad = (v) => { const st = new Storage(); st.setItem(KEPT_KEY, v); return takeKept(st); };
check('not JSON', bad('{'), null);
check('no clientId', bad(JSON.stringify({ clientSeq: 1 })), null);
check('a broken channel keeps the identity alone', bad(JSON.stringify({ ...kept, channels: [{ uri: ROOT, kind: 'root', state: null, pending: [] }] })),
  { clientId: c.clientId, clientSeq: 7, lastSeq: 0, protocolVersion: '', channels: [] });
check('a kind that is not kept is refused', bad(JSON.stringify({ ...kept, channels: [{ uri: 'ahp-terminal:/t', kind: 'terminal', state: {}, pending: [] }] })).channels, []);
check('a bad clientSeq starts from zero', bad(JSON.stringify({ ...kept, clientSeq: -3 })).clientSeq, 0);

// The first connection of a reloaded page, against a scripted host. The
// fake WebSocket answers each request with what serve returns.
class FakeSocket {
  constructor(url) {
    this.url = url;
    this.readyState = 0;
    this.sent = [];
    FakeSocket.last = this;
    setTimeout(() => { this.readyState = FakeSocket.OPEN; this.onopen(); }, 0);
  }

  send(data) {
    const msg = JSON.parse(data);
    this.sent.push(msg);
    if (msg.id === undefined) return;
    const reply = FakeSocket.serve(msg);
    setTimeout(() => this.onmessage({ data: JSON.stringify({ jsonrpc: '2.0', id: msg.id, ...reply }) }), 0);
  }

  close(code, reason) {
    this.readyState = 3;
    setTimeout(() => this.onclose({ code, reason }), 0);
  }
}
FakeSocket.OPEN = 1;
globalThis.WebSocket = FakeSocket;
globalThis.location = { href: 'http://127.0.0.1:1/' };
globalThis.requestAnimationFrame = (f) => setTimeout(f, 0);

const chatURI = 'ahp-chat:/c';
const sent = { clientSeq: 6, action: { type: 'chat/draftChanged', draft: { text: 'sent before the reload' } } };
const unsent = { clientSeq: 7, action: { type: 'chat/draftChanged', draft: { text: 'never sent' } } };
const keptPage = () => ({
  clientId: 'page-1', clientSeq: 7, lastSeq: 40, protocolVersion: '1.1.0', initResult: { defaultDirectory: 'file:///' },
  channels: [{ uri: ROOT, kind: 'root', state: { agents: [] }, pending: [] }, { uri: chatURI, kind: 'chat', state: { turns: [] }, pending: [sent, unsent] }],
});

// connect starts a client from kept against serve and resolves once it
// is connected, with the messages it sent.
function connect(kept, serve) {
  FakeSocket.serve = (msg) => (msg.method === 'listSessions' ? { result: { items: [] } } : serve(msg));
  const c = new Client({ url: '/', kept });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('never connected')), 2000);
    c.addEventListener('state', (e) => {
      if (e.detail.state !== 'connected') return;
      clearTimeout(timer);
      c.stopped = true;
      resolve({ c, sent: FakeSocket.last.sent });
    });
    c.start();
  });
}
const methods = (msgs) => msgs.map((m) => m.method);

{
  // A replay: the echo of the action sent before the reload settles it;
  // the one the host never saw is sent again, with its clientSeq.
  const { c, sent: out } = await connect(keptPage(), (msg) => ({ result: { type: 'replay', missing: [], actions: [
    { channel: chatURI, serverSeq: 41, action: sent.action, origin: { clientId: 'page-1', clientSeq: 6 } },
  ] } }));
  check('a reloaded page opens with reconnect', methods(out), ['reconnect', 'dispatchAction', 'listSessions']);
  check('as the same client, from its last serverSeq, naming its version', [out[0].params.clientId, out[0].params.lastSeenServerSeq, out[0].params.subscriptions, out[0].params._meta],
    ['page-1', 40, [ROOT, chatURI], { 'ahp-go/protocolVersions': ['1.1.0'] }]);
  check('the action the host never saw is sent again', out[1].params, { channel: chatURI, clientSeq: 7, action: unsent.action });
  check('the replayed echo is applied', c.state(chatURI).draft.text, 'never sent');
  check('and the resent action stays pending', c.mirrors.get(chatURI).pending.map((p) => p.clientSeq), [7]);
  check('the resume is reported', c.lastResume, { replayed: true, actions: 1, resent: 1, reloaded: true });
  check('new actions continue the sequence', (c.dispatch(chatURI, { type: 'chat/draftChanged' }), c.clientSeq), 8);
  check('the kept initialize result is used', c.initResult, { defaultDirectory: 'file:///' });
}
{
  // Fresh snapshots: nothing tells what the host applied; pending actions are dropped.
  const { c, sent: out } = await connect(keptPage(), () => ({ result: { type: 'snapshot', snapshots: [
    { resource: ROOT, state: { agents: [{ provider: 'echo' }] }, fromSeq: 3 },
  ] } }));
  check('after snapshots nothing is sent again', methods(out), ['reconnect', 'listSessions']);
  check('a channel without a snapshot is dropped', [...c.mirrors.keys()], [ROOT]);
  check('the root is the snapshot', c.state(ROOT).agents.length, 1);
}
{
  // The host refuses the reconnect: initialize, as the same client.
  const { c, sent: out } = await connect(keptPage(), (msg) => (msg.method === 'reconnect'
    ? { error: { code: -32600, message: 'this host does not know client' } }
    : { result: { protocolVersion: '1.1.0', serverSeq: 2, snapshots: [{ resource: ROOT, state: { agents: [] }, fromSeq: 2 }] } }));
  check('a refused reconnect falls back to initialize', methods(out), ['reconnect', 'initialize', 'listSessions']);
  check('with the same clientId', out[1].params.clientId, 'page-1');
  check('and starts over from the new snapshots', [[...c.mirrors.keys()], c.lastSeq], [[ROOT], 2]);
}
{
  // Only an identity kept: initialize with it.
  const { sent: out } = await connect({ clientId: 'page-2', clientSeq: 3, lastSeq: 0, protocolVersion: '', channels: [] },
    () => ({ result: { protocolVersion: '1.1.0', serverSeq: 2, snapshots: [{ resource: ROOT, state: {}, fromSeq: 2 }] } }));
  check('an identity alone initializes as that client', [methods(out), out[0].params.clientId], [['initialize', 'listSessions'], 'page-2']);
}

let failed = 0;
for (const [name, ok, got, want] of cases) {
  if (!ok) { failed++; console.log(`FAIL ${name}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`); }
}
console.log(`${cases.length - failed} passed, ${failed} failed`);
