// The page's AHP client: one WebSocket to the host that served the page,
// JSON-RPC requests, and a mirror of every subscribed channel.
//
// A mirror keeps the confirmed state (what the host sequenced) and the
// page's own actions still waiting for their echo; what the page shows is
// the confirmed state with the pending actions applied on top
// (guide/reconciliation.md). When the connection drops the client
// reconnects with backoff and sends `reconnect`, so the host either
// replays what was missed or sends fresh snapshots.
//
// A reload of the page goes on as the same client: before the page goes
// away it leaves what keep returns (its clientId, the sequence numbers,
// the mirrors of the channels the page reopens by itself and their
// pending actions) in the tab's sessionStorage, and the reloaded page
// starts from it with `reconnect` rather than `initialize`. Terminal
// claims are a clientId's, so the reloaded page still holds them; its
// actions the host never saw are sent again.

import { reduce } from './reducers.js';

/** Versions offered at initialize, newest first. */
export const PROTOCOL_VERSIONS = ['1.1.0', '1.0.0', '0.8.0', '0.7.0', '0.6.0'];

export const ROOT = 'ahp-root://';

/** The path where the host answers whether it takes the page's token. */
export const TOKEN_CHECK = '/token-check';

/** kindOf returns the channel kind of a channel URI. */
export function kindOf(uri) {
  const scheme = uri.slice(0, uri.indexOf(':'));
  switch (scheme) {
    case 'ahp-root': return 'root';
    case 'ahp-session': {
      // Channels below a session: ahp-session:/<id>/annotations and
      // ahp-session:/<id>/changeset/<name>.
      const sub = uri.slice(scheme.length + 1).replace(/^\/+/, '').split('/').slice(1);
      if (sub.length === 1 && sub[0] === 'annotations') return 'annotations';
      if (sub.length >= 2 && sub[0] === 'changeset') return 'changeset';
      return 'session';
    }
    case 'ahp-chat': return 'chat';
    case 'ahp-terminal': return 'terminal';
    case 'ahp-changeset': return 'changeset';
    case 'ahp-annotations': return 'annotations';
    case 'ahp-automations': return 'automation';
    case 'ahp-automation-run': return 'automationRun';
    default:
      // Every other channel has an ahp-* scheme; clients name sessions as
      // they like (VS Code and ahpd: <provider>:/<id>).
      if (!/^[a-z][a-z0-9+.-]*$/i.test(scheme) || /^(ahp-|file$)/i.test(scheme)) return 'unknown';
      return /^[^/]+:\/+[^/]+\/annotations$/.test(uri) ? 'annotations' : 'session';
  }
}

/** newID returns a random UUID, also outside secure contexts. */
export function newID() {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The sessionStorage key under which a page leaves what keep returns. */
export const KEPT_KEY = 'ahpd-client';

// The reconnect params' _meta key under which a client names the
// versions it negotiated (ahpd's host.ReconnectVersionsMeta): a host that
// no longer knows the client speaks one of them or refuses.
const RECONNECT_VERSIONS = 'ahp-go/protocolVersions';

// The kinds of channel a reloaded page reopens by itself (from its
// address); others (terminals, changesets) are subscribed again when shown.
const KEPT_KINDS = new Set(['root', 'session', 'chat']);

// At most this many characters of channel state are kept for a reload.
const KEPT_CHARS = 2000000;

/**
 * takeKept returns what a page left in storage for its reload (see
 * Client.keep), or null, and removes it: a tab duplicated later, which
 * copies the tab's sessionStorage, then starts as a client of its own.
 */
export function takeKept(storage) {
  let kept = null;
  try {
    const raw = storage.getItem(KEPT_KEY);
    storage.removeItem(KEPT_KEY);
    kept = raw ? JSON.parse(raw) : null;
  } catch {
    return null;
  }
  if (!kept || typeof kept.clientId !== 'string' || !kept.clientId) return null;
  if (!Number.isSafeInteger(kept.clientSeq) || kept.clientSeq < 0) kept.clientSeq = 0;
  if (!Number.isSafeInteger(kept.lastSeq) || kept.lastSeq < 0 || typeof kept.protocolVersion !== 'string' ||
      !Array.isArray(kept.channels) || !kept.channels.every(keptChannel)) {
    // The identity alone: the page initializes again as the same client.
    return { clientId: kept.clientId, clientSeq: kept.clientSeq, lastSeq: 0, protocolVersion: '', channels: [] };
  }
  return kept;
}

const keptChannel = (c) => !!c && typeof c.uri === 'string' && KEPT_KINDS.has(c.kind) &&
  c.state && typeof c.state === 'object' && Array.isArray(c.pending) &&
  c.pending.every((p) => p && Number.isSafeInteger(p.clientSeq) && p.action && typeof p.action.type === 'string');

/** leaveKept stores what keep returns for the page's reload. */
export function leaveKept(storage, kept) {
  try {
    storage.setItem(KEPT_KEY, JSON.stringify(kept));
  } catch {
    // Too big for the storage: the identity alone.
    try {
      storage.setItem(KEPT_KEY, JSON.stringify({ clientId: kept.clientId, clientSeq: kept.clientSeq, lastSeq: 0, protocolVersion: '', channels: [] }));
    } catch { /* storage off */ }
  }
}

export class RPCError extends Error {
  constructor(err) {
    super(err.message || 'request failed');
    this.code = err.code;
    this.data = err.data;
  }
}

/** modern reports whether a version follows the reducer rules of 0.9.0 and later. */
export function modern(version) {
  const [major, minor] = String(version).split('.').map(Number);
  return major > 0 || minor >= 9;
}

class Mirror {
  constructor(uri, state, opts, kind) {
    this.opts = opts;
    this.uri = uri;
    this.kind = kind || kindOf(uri);
    this.confirmed = state;
    this.pending = []; // [{clientSeq, action}]
    this.view = state;
    this.listeners = new Set();
    this.taps = new Set(); // called with each confirmed action and snapshot
  }

  recompute() {
    let s = this.confirmed;
    for (const p of this.pending) s = reduce(this.kind, s, p.action, undefined, this.opts);
    this.view = s;
    this.stale = false;
  }
}

export class Client extends EventTarget {
  /**
   * @param {{url: string, token?: string, kept?: object}} opts kept is
   * what an earlier page of this tab left for its reload (takeKept).
   */
  constructor(opts) {
    super();
    this.url = opts.url;
    this.token = opts.token || '';
    this.kept = opts.kept || null;
    this.clientId = this.kept ? this.kept.clientId : newID();
    this.ws = null;
    this.nextID = 1;
    this.calls = new Map();
    this.clientSeq = this.kept ? this.kept.clientSeq : 0;
    this.lastSeq = 0;
    this.mirrors = new Map();
    this.sessions = new Map(); // session URI -> summary
    this.ready = false;
    this.everConnected = false;
    this.attempt = 0;
    this.stopped = false;
    this.protocolVersion = '';
    this.initResult = null;
    this.dirty = new Set();
    this.flushScheduled = false;
  }

  // ---- connection

  /** start connects and keeps the connection up until stop. */
  start() {
    this.stopped = false;
    this.open();
  }

  stop() {
    this.stopped = true;
    if (this.ws) this.ws.close(1000, 'page closed');
  }

  wsURL() {
    const u = new URL(this.url, location.href);
    u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
    u.hash = '';
    if (this.token) u.searchParams.set('token', this.token);
    return u.toString();
  }

  open() {
    this.setState(this.everConnected ? 'reconnecting' : 'connecting');
    let ws;
    try {
      ws = new WebSocket(this.wsURL());
    } catch (e) {
      this.setState('failed', String(e));
      return;
    }
    this.ws = ws;
    ws.onopen = () => this.handshake(ws);
    ws.onmessage = (ev) => this.onFrame(ev.data);
    ws.onclose = (ev) => this.onClose(ws, ev);
  }

  async handshake(ws) {
    try {
      if (this.everConnected) {
        await this.resume();
      } else if (!(this.kept && await this.resumeKept())) {
        const res = await this.request('initialize', {
          channel: ROOT,
          protocolVersions: PROTOCOL_VERSIONS,
          clientId: this.clientId,
          clientInfo: { name: 'ahpd web', version: '1' },
          initialSubscriptions: [ROOT],
        }, { beforeReady: true });
        this.initResult = res;
        this.protocolVersion = res.protocolVersion;
        this.lastSeq = res.serverSeq;
        for (const snap of res.snapshots || []) this.install(snap);
        await this.loadSessions();
      }
      if (ws !== this.ws) return;
      this.ready = true;
      this.everConnected = true;
      this.attempt = 0;
      this.setState('connected');
    } catch (e) {
      if (e instanceof RPCError && e.code === -32005) {
        this.stopped = true;
        this.setState('failed', `the host speaks none of the versions this page offers (${PROTOCOL_VERSIONS.join(', ')})`);
      }
      ws.close(4000, 'handshake failed');
    }
  }

  // resumeKept opens the first connection of a reloaded page with
  // reconnect, from the mirrors the earlier page kept. It reports false
  // when there is nothing to resume from or the host refuses (it forgot
  // the client and speaks none of its version): the page then initializes
  // with the same clientId.
  async resumeKept() {
    const k = this.kept;
    if (!k.protocolVersion || !k.channels.some((c) => c.uri === ROOT)) {
      this.kept = null;
      return false;
    }
    this.protocolVersion = k.protocolVersion;
    this.initResult = k.initResult || null;
    this.lastSeq = k.lastSeq;
    for (const c of k.channels) {
      const m = this.install({ resource: c.uri, state: c.state }, c.kind);
      m.pending = c.pending.map((p) => ({ clientSeq: p.clientSeq, action: p.action }));
      m.stale = true;
      m.kept = c.uri !== ROOT;
    }
    try {
      await this.resume([k.protocolVersion]);
    } catch (e) {
      if (!(e instanceof RPCError)) throw e; // kept for the next attempt
      this.kept = null;
      this.mirrors.clear();
      this.lastSeq = 0;
      this.protocolVersion = '';
      this.initResult = null;
      return false;
    }
    this.kept = null;
    this.lastResume.reloaded = true;
    return true;
  }

  /**
   * keep returns what a reload of this page needs to go on as the same
   * client: the clientId, the last clientSeq and serverSeq, the version,
   * and the mirrors of the channels the page reopens by itself, with their
   * pending actions, as far as their states fit in KEPT_CHARS.
   */
  keep() {
    const kept = { clientId: this.clientId, clientSeq: this.clientSeq, lastSeq: 0, protocolVersion: '', channels: [] };
    if (!this.protocolVersion || !this.mirrors.has(ROOT)) return kept;
    kept.lastSeq = this.lastSeq;
    kept.protocolVersion = this.protocolVersion;
    if (this.initResult) {
      const { snapshots, ...rest } = this.initResult;
      kept.initResult = rest;
    }
    const ordered = [this.mirrors.get(ROOT), ...[...this.mirrors.values()].filter((m) => m.uri !== ROOT)];
    let used = 0;
    for (const m of ordered) {
      if (!KEPT_KINDS.has(m.kind)) continue;
      const size = JSON.stringify(m.confirmed).length;
      if (used + size > KEPT_CHARS) {
        if (m.uri === ROOT) return kept;
        continue;
      }
      used += size;
      kept.channels.push({ uri: m.uri, kind: m.kind, state: m.confirmed, pending: m.pending });
    }
    return kept;
  }

  // resume sends reconnect for every subscribed channel. The host answers
  // with the envelopes missed since lastSeq, or fresh snapshots. After a
  // replay, the echoes of this page's actions settle them; those still
  // pending never reached the host (they were sent while the connection
  // was down, or by the page before a reload) and are sent again. Fresh
  // snapshots tell nothing of them: they are dropped. versions, when
  // given, names the version this client negotiated, for a host that no
  // longer knows the client.
  async resume(versions) {
    const subs = [...this.mirrors.keys()];
    const params = { channel: ROOT, clientId: this.clientId, lastSeenServerSeq: this.lastSeq, subscriptions: subs };
    if (versions) params._meta = { [RECONNECT_VERSIONS]: versions };
    const res = await this.request('reconnect', params, { beforeReady: true });
    if (res.type === 'replay' || Array.isArray(res.actions)) {
      for (const env of res.actions || []) this.onEnvelope(env);
      for (const uri of res.missing || []) this.drop(uri);
      let resent = 0;
      for (const m of this.mirrors.values()) {
        for (const p of m.pending) {
          this.notify('dispatchAction', { channel: m.uri, clientSeq: p.clientSeq, action: p.action });
          resent++;
        }
      }
      this.lastResume = { replayed: true, actions: (res.actions || []).length, resent };
    } else {
      for (const m of this.mirrors.values()) m.pending = [];
      const got = new Set();
      for (const snap of res.snapshots || []) { this.install(snap); got.add(snap.resource); }
      for (const uri of subs) if (!got.has(uri)) this.drop(uri);
      this.lastResume = { replayed: false, snapshots: (res.snapshots || []).length };
    }
    for (const m of this.mirrors.values()) { m.recompute(); this.markDirty(m.uri); }
    // Catalog notifications sent while away are not replayed: list again.
    await this.loadSessions();
  }

  onClose(ws, ev) {
    if (ws !== this.ws) return;
    this.ready = false;
    for (const [, call] of this.calls) call.reject(new Error('connection lost'));
    this.calls.clear();
    if (this.stopped) {
      if (this.connState !== 'failed') this.setState('closed', ev.reason);
      return;
    }
    if (ev.code === 1008 && /token/i.test(ev.reason)) {
      this.setState('unauthorized', ev.reason);
      return;
    }
    this.attempt++;
    if (ev.code === 1006) {
      // A browser is not shown why an upgrade failed. Ask the host, with
      // the same token, on a plain request it answers 401 to when the
      // token is missing or wrong; then wait for a new token rather than
      // retrying one the host refuses.
      this.checkToken().then((refused) => {
        if (ws !== this.ws || this.stopped) return;
        if (refused) {
          this.setState('unauthorized', this.token ? 'the host refused this token' : 'the host needs a token');
          return;
        }
        this.retry(ev);
      });
      return;
    }
    this.retry(ev);
  }

  // checkToken reports whether the host refuses the page's token (or its
  // lack of one); false when the host cannot be reached.
  async checkToken() {
    const u = new URL(TOKEN_CHECK, location.href);
    if (this.token) u.searchParams.set('token', this.token);
    try {
      const res = await fetch(u, { cache: 'no-store', credentials: 'omit' });
      return res.status === 401;
    } catch {
      return false;
    }
  }

  retry(ev) {
    // Full jitter: a random wait up to a bound that doubles, at most 5 s.
    const bound = Math.min(5000, 250 * 2 ** Math.min(this.attempt, 5));
    const delay = Math.random() * bound;
    this.setState('disconnected', ev.reason || 'connection lost');
    setTimeout(() => { if (!this.stopped) this.open(); }, delay);
  }

  setState(state, detail = '') {
    this.connState = state;
    this.dispatchEvent(new CustomEvent('state', { detail: { state, detail } }));
  }

  // ---- JSON-RPC

  request(method, params, { beforeReady = false } = {}) {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN || (!this.ready && !beforeReady)) {
      return Promise.reject(new Error('not connected'));
    }
    const id = this.nextID++;
    return new Promise((resolve, reject) => {
      this.calls.set(id, { resolve, reject });
      ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  notify(method, params) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify({ jsonrpc: '2.0', method, params }));
    }
  }

  onFrame(data) {
    let msg;
    try { msg = JSON.parse(data); } catch { return; }
    if (msg.id !== undefined && msg.method === undefined) {
      const call = this.calls.get(msg.id);
      if (!call) return;
      this.calls.delete(msg.id);
      if (msg.error) call.reject(new RPCError(msg.error)); else call.resolve(msg.result);
      return;
    }
    if (msg.id !== undefined) {
      // A request from the host: this page serves none of them.
      this.ws.send(JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `method not supported by this client: ${msg.method}` } }));
      return;
    }
    const p = msg.params || {};
    switch (msg.method) {
      case 'action': this.onEnvelope(p); break;
      case 'root/sessionAdded': this.sessions.set(p.summary.resource, p.summary); this.emit('sessions'); break;
      case 'root/sessionRemoved': this.sessions.delete(p.session); this.emit('sessions'); break;
      case 'root/sessionSummaryChanged': {
        const cur = this.sessions.get(p.session);
        if (!cur) break;
        const next = { ...cur };
        for (const [k, v] of Object.entries(p.changes || {})) {
          if (v === null) delete next[k]; else next[k] = v;
        }
        this.sessions.set(p.session, next);
        this.emit('sessions');
        break;
      }
    }
  }

  emit(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }

  // ---- mirrors

  onEnvelope(env) {
    if (typeof env.serverSeq === 'number' && env.serverSeq > this.lastSeq) this.lastSeq = env.serverSeq;
    const m = this.mirrors.get(env.channel);
    if (!m) return;
    const own = env.origin && env.origin.clientId === this.clientId;
    if (own) {
      const i = m.pending.findIndex((p) => p.clientSeq === env.origin.clientSeq);
      if (i >= 0) m.pending.splice(i, 1);
    }
    if (env.rejectionReason) {
      if (own) this.emit('rejected', { channel: env.channel, action: env.action, reason: env.rejectionReason });
    } else {
      m.confirmed = reduce(m.kind, m.confirmed, env.action, undefined, m.opts);
      for (const fn of m.taps) fn({ action: env.action });
    }
    this.markDirty(m.uri);
  }

  // markDirty recomputes and notifies once per animation frame, however
  // many envelopes arrived in between.
  markDirty(uri) {
    const m = this.mirrors.get(uri);
    if (m) m.stale = true;
    this.dirty.add(uri);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    requestAnimationFrame(() => this.flush());
  }

  flush() {
    this.flushScheduled = false;
    const uris = [...this.dirty];
    this.dirty.clear();
    for (const uri of uris) {
      const m = this.mirrors.get(uri);
      if (!m) continue;
      if (m.stale) m.recompute();
      for (const fn of m.listeners) fn(m.view);
    }
  }

  install(snap, kind) {
    let m = this.mirrors.get(snap.resource);
    if (!m) {
      m = new Mirror(snap.resource, snap.state, { modern: modern(this.protocolVersion) }, kind);
      this.mirrors.set(snap.resource, m);
    } else {
      m.confirmed = snap.state;
      m.pending = [];
      for (const fn of m.taps) fn({ snapshot: snap.state });
    }
    m.recompute();
    this.markDirty(m.uri);
    return m;
  }

  drop(uri) {
    const m = this.mirrors.get(uri);
    if (!m) return;
    this.mirrors.delete(uri);
    for (const fn of m.listeners) fn(null);
  }

  /**
   * state returns the current state of a subscribed channel: confirmed
   * state and pending actions, including those not yet drawn.
   */
  state(uri) {
    const m = this.mirrors.get(uri);
    if (!m) return undefined;
    if (m.stale) m.recompute();
    return m.view;
  }

  /**
   * trim replaces the confirmed state of a channel with what fn makes of
   * it, without an action: for output the host no longer keeps either
   * (a terminal's old scrollback), so the page's copy stays bounded too.
   */
  trim(uri, fn) {
    const m = this.mirrors.get(uri);
    if (!m) return;
    m.confirmed = fn(m.confirmed);
    m.stale = true;
  }

  /** watch calls fn with the channel's state after each change. */
  watch(uri, fn) {
    const m = this.mirrors.get(uri);
    if (!m) return () => {};
    m.listeners.add(fn);
    return () => m.listeners.delete(fn);
  }

  /**
   * tap calls fn with every action the host confirms on a subscribed
   * channel, as {action}, and with {snapshot} when the channel's state is
   * replaced (a reconnect without replay). Unlike watch, which is called
   * at most once a frame with the state, it sees each action: what a
   * terminal needs to feed its emulator the output as it comes.
   */
  tap(uri, fn) {
    const m = this.mirrors.get(uri);
    if (!m) return () => {};
    m.taps.add(fn);
    return () => m.taps.delete(fn);
  }

  /**
   * subscribe subscribes to a channel and mirrors it. kind names the
   * channel's kind when the page knows it from where it found the URI (a
   * changeset catalogue, say) and the URI's shape may not tell.
   */
  async subscribe(uri, view, kind) {
    const m = this.mirrors.get(uri);
    if (m) {
      m.kept = false;
      return this.state(uri);
    }
    const params = { channel: uri };
    if (view) params.view = view;
    const res = await this.request('subscribe', params);
    const snap = res.snapshot;
    if (typeof snap.fromSeq === 'number' && snap.fromSeq > this.lastSeq) this.lastSeq = snap.fromSeq;
    return this.install(snap, kind).view;
  }

  /**
   * releaseKept unsubscribes from the channels a reload kept (resumeKept)
   * that the page has not asked for since with subscribe.
   */
  releaseKept() {
    for (const m of [...this.mirrors.values()]) if (m.kept) this.unsubscribe(m.uri);
  }

  unsubscribe(uri) {
    if (!this.mirrors.has(uri)) return;
    this.mirrors.delete(uri);
    this.notify('unsubscribe', { channel: uri });
  }

  /** dispatch applies action at once and sends it to the host. */
  dispatch(uri, action) {
    const m = this.mirrors.get(uri);
    const clientSeq = ++this.clientSeq;
    if (m) {
      m.pending.push({ clientSeq, action });
      this.markDirty(uri);
    }
    this.notify('dispatchAction', { channel: uri, clientSeq, action });
  }

  async loadSessions() {
    const all = new Map();
    let cursor;
    do {
      const params = { channel: ROOT, limit: 200 };
      if (cursor) params.cursor = cursor;
      const res = await this.request('listSessions', params, { beforeReady: true });
      for (const s of res.items || []) all.set(s.resource, s);
      cursor = res.nextCursor;
    } while (cursor);
    this.sessions = all;
    this.emit('sessions');
  }
}
