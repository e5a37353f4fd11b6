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

let failed = 0;
for (const [name, ok, got, want] of cases) {
  if (!ok) { failed++; console.log(`FAIL ${name}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`); }
}
console.log(`${cases.length - failed} passed, ${failed} failed`);
