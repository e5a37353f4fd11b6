// The terminal view: the host's terminals (the root state's `terminals`),
// one of them shown in xterm.js.
//
// A terminal's channel state holds its retained output; the view writes
// that once when it subscribes, then each `terminal/data` the host
// confirms, in order (client.tap), so the emulator sees the same byte
// stream the PTY produced. Keys go to the host as `terminal/input`, which
// changes no state: the echo comes back as output. The size follows the
// element while this page holds the terminal's claim; otherwise the
// emulator takes the size the host reports, so output laid out for the
// holder's screen still lines up.
//
// xterm.js (about 345 KB) is loaded the first time a terminal is shown,
// not with the page.

import { h, $ } from './dom.js';
import { ROOT, newID } from './client.js';

let loading = null;

// LoginTerminal runs an agent's login (ahpd's "ahp-go/signIn" terminal)
// in an emulator inside box, typed into from the page. onExit gets the
// exit code once the login ended; by then ahpd has checked the agent
// again and the root state holds its new state.
export class LoginTerminal {
  constructor(client, box, onExit) {
    this.client = client;
    this.box = box;
    this.onExit = onExit;
    this.uri = null;
    this.term = null;
    this.untap = null;
  }

  async start(resource) {
    const uri = `ahp-terminal:/${newID()}`;
    const { Terminal, FitAddon } = await loadEmulator();
    const term = new Terminal({ fontSize: 12,
      fontFamily: 'ui-monospace, "SF Mono", Menlo, Consolas, "DejaVu Sans Mono", monospace' });
    const fit = new FitAddon();
    term.loadAddon(fit);
    this.term = term;
    term.open(this.box);
    // The login's PTY gets the size that fits the dialog (a phone's too).
    const dims = fit.proposeDimensions();
    const cols = dims && dims.cols > 0 ? dims.cols : 80;
    const rows = dims && dims.rows > 0 ? dims.rows : 20;
    term.resize(cols, rows);
    await this.client.request('createTerminal', {
      channel: uri, claim: { kind: 'client', clientId: this.client.clientId }, cols, rows,
      _meta: { 'ahp-go/signIn': resource },
    });
    this.uri = uri;
    await this.client.subscribe(uri);
    term.write(raw(this.client.state(uri)));
    term.onData((data) => {
      const st = this.client.state(uri);
      if (st && !exited(st)) this.client.dispatch(uri, { type: 'terminal/input', data });
    });
    this.untap = this.client.tap(uri, (e) => {
      if (e.snapshot) { term.reset(); term.write(raw(e.snapshot)); return; }
      if (e.action.type === 'terminal/data') term.write(e.action.data);
      if (e.action.type === 'terminal/exited') this.onExit(e.action.exitCode);
    });
    const st = this.client.state(uri);
    if (exited(st)) this.onExit(st.lifecycle.exitCode);
    term.focus();
  }

  // close disposes the terminal (ending the login if it still runs).
  async close() {
    if (this.untap) this.untap();
    this.untap = null;
    const uri = this.uri;
    this.uri = null;
    if (this.term) this.term.dispose();
    this.term = null;
    if (!uri) return;
    this.client.unsubscribe(uri);
    try { await this.client.request('disposeTerminal', { channel: uri }); } catch { /* gone already */ }
  }
}

// loadEmulator loads xterm.js, its fit addon and its stylesheet, once.
function loadEmulator() {
  if (!loading) {
    loading = (async () => {
      stampStyleNonce();
      const css = h('link', { rel: 'stylesheet', href: '/vendor/xterm.css' });
      const styled = new Promise((ok, fail) => {
        css.onload = ok;
        css.onerror = () => { css.remove(); fail(new Error('the terminal stylesheet did not load')); };
      });
      document.head.append(css);
      const [xterm, fit] = await Promise.all([import('../vendor/xterm.mjs'), import('../vendor/xterm-addon-fit.mjs'), styled]);
      return { Terminal: xterm.Terminal, FitAddon: fit.FitAddon };
    })();
    loading.catch(() => { loading = null; });
  }
  return loading;
}

let stamped = false;

// stampStyleNonce gives every style element the page creates the nonce of
// the response that served the page. xterm.js draws its cells with style
// elements of its own, and the page's Content-Security-Policy lets in
// only style elements that carry that nonce. The nonce must be on the
// element before it is inserted, so it is set where elements are made.
function stampStyleNonce() {
  if (stamped) return;
  stamped = true;
  const nonce = document.querySelector('meta[name="ahpd-style-nonce"]')?.content;
  if (!nonce || nonce.startsWith('{{')) return;
  const create = Document.prototype.createElement;
  Document.prototype.createElement = function createElement(tag, opts) {
    const el = create.call(this, tag, opts);
    if (typeof tag === 'string' && tag.toLowerCase() === 'style') el.setAttribute('nonce', nonce);
    return el;
  };
}

/** raw returns a terminal's retained output as one VT stream. */
export function raw(st) {
  return ((st && st.content) || []).map((p) => (p.type === 'command' ? p.output : p.value) || '').join('');
}

// The page keeps at most this much of a terminal's output (the host keeps
// 1 MiB by default); past a quarter more, it drops the oldest.
export const RETAIN = 1 << 20;

/**
 * trimContent keeps the last limit characters of a terminal's content
 * parts, starting at a line when one begins near the cut.
 */
export function trimContent(content, limit) {
  let total = 0;
  for (let i = content.length - 1; i >= 0; i--) {
    const p = content[i];
    const text = (p.type === 'command' ? p.output : p.value) || '';
    if (total + text.length <= limit) { total += text.length; continue; }
    let start = text.length - (limit - total);
    if (text[start - 1] !== '\n') {
      // Begin at the next line, when one begins near.
      const nl = text.indexOf('\n', start);
      if (nl >= 0 && nl - start < 4096) start = nl + 1;
    }
    const kept = text.slice(start);
    const rest = content.slice(i + 1);
    if (!kept) return rest;
    return [p.type === 'command' ? { ...p, output: kept } : { ...p, value: kept }, ...rest];
  }
  return content;
}

// The page remembers which session each terminal it started belongs to
// (a terminal claimed by this page carries no session of its own).
const TERMS_KEY = 'ahpd-terminal-sessions';

function terminalSessions() {
  try { return JSON.parse(localStorage.getItem(TERMS_KEY) || '{}'); } catch { return {}; }
}

export function sessionOfTerminal(uri) { return terminalSessions()[uri] || null; }

function rememberTerminal(uri, session) {
  const all = terminalSessions();
  all[uri] = session;
  // Keep the most recent 200.
  const keys = Object.keys(all);
  for (const k of keys.slice(0, Math.max(0, keys.length - 200))) delete all[k];
  try { localStorage.setItem(TERMS_KEY, JSON.stringify(all)); } catch { /* full or off */ }
}

const exited = (st) => !!st && st.lifecycle && st.lifecycle.status === 'exited';

export class TerminalView {
  constructor(app) {
    this.app = app;
    this.client = app.client;
    this.uri = null; // the terminal shown
    this.listed = false; // whether the root list has named it yet
    this.emu = null; // {term, fit}
    this.untap = null;
    this.unwatch = null;
    this.unwatchRoot = null;
    this.sizeTimer = 0;
    this.retained = 0; // characters of output the mirror holds
    $('#term-tab').addEventListener('click', () => this.show());
    $('#terms-close').addEventListener('click', () => this.hide());
    $('#term-new').addEventListener('click', () => this.create());
    $('#term-dispose').addEventListener('click', () => this.dispose());
    $('#term-take').addEventListener('click', () => this.takeOver());
  }

  get shown() { return !$('#terms').hidden; }

  show(uri) {
    this.app.closeFiles();
    if (this.app.changes) this.app.changes.hide();
    document.body.classList.add('terms-open');
    $('#terms').hidden = false;
    $('#term-tab').classList.add('selected');
    if (!this.unwatchRoot) this.unwatchRoot = this.client.watch(ROOT, (r) => this.renderList(r));
    this.renderList(this.client.state(ROOT));
    this.render(this.uri && this.client.state(this.uri));
    if (uri) this.select(uri);
    else this.fitSoon();
  }

  hide() {
    document.body.classList.remove('terms-open');
    $('#terms').hidden = true;
    $('#term-tab').classList.remove('selected');
  }

  // detach stops showing the terminal and unsubscribes from it.
  detach() {
    if (this.untap) this.untap();
    if (this.unwatch) this.unwatch();
    this.untap = this.unwatch = null;
    if (this.uri) this.client.unsubscribe(this.uri);
    this.uri = null;
    this.listed = false;
    if (this.emu) this.emu.term.reset();
    this.render(null);
    this.renderList(this.client.state(ROOT));
  }

  renderList(root) {
    const list = (root && root.terminals) || [];
    if (this.uri) {
      const here = list.some((t) => t.resource === this.uri);
      if (here) this.listed = true;
      else if (this.listed) {
        // Disposed, here or by another client.
        this.app.toast('The terminal was closed.');
        this.detach();
        return;
      }
    }
    // Only the open session's terminals: those its agent runs (claimed by
    // the session) and those started from this page for it.
    const mine = list.filter((t) => this.ofSession(t));
    $('#term-empty').textContent = list.length > mine.length
      ? `No terminal of this session open (${list.length - mine.length} of other sessions). A new one starts in the session's directory.`
      : 'No terminal open. A new one starts in the session\'s directory.';
    $('#term-list').replaceChildren(...mine.map((t) => {
      const on = t.resource === this.uri;
      const ended = t.lifecycle && t.lifecycle.status === 'exited';
      return h('button', {
        type: 'button', role: 'tab', class: `tab ${on ? 'selected' : ''}`, 'aria-selected': on ? 'true' : 'false',
        'data-uri': t.resource, title: ended ? 'exited' : 'running', onclick: () => this.select(t.resource),
      }, h('span', { class: `dot ${ended ? '' : 'idle'}` }), t.title || 'Terminal');
    }));
  }

  // ofSession reports whether a terminal belongs to the open session.
  ofSession(t) {
    const s = this.app.sessionURI;
    if (!s) return false;
    const c = t.claim;
    if (c && c.kind === 'session') return c.session === s;
    return sessionOfTerminal(t.resource) === s;
  }

  async emulator() {
    if (this.emu) return this.emu;
    const { Terminal, FitAddon } = await loadEmulator();
    if (this.emu) return this.emu;
    const term = new Terminal({
      cursorBlink: true, scrollback: 5000, fontSize: 14,
      fontFamily: 'ui-monospace, "SF Mono", Menlo, Consolas, "DejaVu Sans Mono", monospace',
    });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open($('#term-screen'));
    term.onData((data) => this.input(data));
    term.onResize(({ cols, rows }) => this.resized(cols, rows));
    new ResizeObserver(() => this.fitSoon()).observe($('#term-screen'));
    this.emu = { term, fit };
    return this.emu;
  }

  async select(uri) {
    if (uri === this.uri) { this.fitSoon(); return; }
    this.detach();
    this.uri = uri;
    $('#term-screen').classList.remove('none');
    let emu;
    try {
      // The emulator opens in a shown element, so it can measure its cells.
      [emu] = await Promise.all([this.emulator(), this.client.subscribe(uri)]);
    } catch (e) {
      if (this.uri === uri) { this.uri = null; this.render(null); }
      this.app.toast(`Cannot open the terminal: ${e.message}`);
      return;
    }
    if (this.uri !== uri) return;
    // What the channel holds now, then every action after it.
    emu.term.reset();
    const text = raw(this.client.state(uri));
    this.retained = text.length;
    emu.term.write(text);
    this.untap = this.client.tap(uri, (e) => this.onChannel(e));
    this.unwatch = this.client.watch(uri, (st) => this.render(st));
    this.renderList(this.client.state(ROOT));
    this.render(this.client.state(uri));
    this.fitSoon();
    emu.term.focus();
  }

  onChannel(e) {
    const term = this.emu && this.emu.term;
    if (!term) return;
    if (e.snapshot) {
      // A reconnect sent a fresh state instead of the missed actions.
      term.reset();
      const text = raw(e.snapshot);
      this.retained = text.length;
      term.write(text);
      return;
    }
    const a = e.action;
    switch (a.type) {
      case 'terminal/data':
        term.write(a.data);
        this.retained += a.data.length;
        if (this.retained > RETAIN + RETAIN / 4) {
          this.client.trim(this.uri, (s) => ({ ...s, content: trimContent(s.content || [], RETAIN) }));
          this.retained = raw(this.client.state(this.uri)).length;
        }
        break;
      case 'terminal/cleared': term.clear(); break;
      case 'terminal/resized': if (!this.mine()) this.fitSoon(); break;
    }
  }

  mine(st = this.uri && this.client.state(this.uri)) {
    const c = st && st.claim;
    return !!c && c.kind === 'client' && c.clientId === this.client.clientId;
  }

  claimText(c) {
    if (!c) return '';
    if (c.kind === 'client') return c.clientId === this.client.clientId ? 'held by this page' : `held by client ${c.clientId.slice(0, 8)}`;
    if (c.kind === 'session') {
      const sum = this.client.sessions.get(c.session);
      const name = (sum && sum.title) || 'a session';
      return `held by ${name}${c.toolCallId ? ` (tool call ${c.toolCallId})` : ''}`;
    }
    return '';
  }

  render(st) {
    $('#term-bar').hidden = !st;
    $('#term-empty').hidden = !!st || !!this.uri;
    $('#term-screen').classList.toggle('none', !this.uri);
    if (!st) return;
    $('#term-title').textContent = st.title || 'Terminal';
    const ended = exited(st);
    const code = ended && st.lifecycle.exitCode != null ? ` (code ${st.lifecycle.exitCode})` : '';
    $('#term-state').textContent = ended ? `exited${code}` : 'running';
    $('#term-state').className = `tag ${ended ? '' : 'running'}`;
    $('#term-claim').textContent = this.claimText(st.claim);
    // A client's claim is its own to give away (the host refuses others);
    // a session's claim a person may take over, to step in.
    $('#term-take').hidden = ended || !st.claim || st.claim.kind !== 'session';
    if (this.emu) this.emu.term.options.disableStdin = ended;
    const holder = this.mine(st);
    if (holder !== this.wasHolder) { this.wasHolder = holder; this.fitSoon(); }
  }

  // fitSoon sizes the emulator on the next frame: to the element while
  // this page holds the claim (the PTY follows), else to the host's size.
  fitSoon() {
    if (this.fitting) return;
    this.fitting = true;
    requestAnimationFrame(() => {
      this.fitting = false;
      const st = this.uri && this.client.state(this.uri);
      if (!st || !this.emu || !this.shown) return;
      if (this.mine(st) && !exited(st)) {
        this.emu.fit.fit();
        this.resized(this.emu.term.cols, this.emu.term.rows);
      } else if (st.cols > 0 && st.rows > 0 && (st.cols !== this.emu.term.cols || st.rows !== this.emu.term.rows)) {
        this.emu.term.resize(st.cols, st.rows);
      }
    });
  }

  input(data) {
    const st = this.uri && this.client.state(this.uri);
    if (!st || exited(st)) return;
    this.client.dispatch(this.uri, { type: 'terminal/input', data });
  }

  // resized tells the host the emulator's size, when this page holds the
  // claim and the size differs from the host's; at most every 150 ms.
  resized(cols, rows) {
    clearTimeout(this.sizeTimer);
    this.sizeTimer = setTimeout(() => {
      const st = this.uri && this.client.state(this.uri);
      if (!st || !this.mine(st) || exited(st) || (st.cols === cols && st.rows === rows)) return;
      this.client.dispatch(this.uri, { type: 'terminal/resized', cols, rows });
    }, 150);
  }

  takeOver() {
    if (!this.uri) return;
    this.client.dispatch(this.uri, { type: 'terminal/claimed', claim: { kind: 'client', clientId: this.client.clientId } });
  }

  // create starts a shell in the session's first working directory,
  // claimed by this page, sized to the element when the emulator is up.
  async create() {
    const ss = this.app.sessionURI && this.client.state(this.app.sessionURI);
    const dir = ss && ss.workingDirectories && ss.workingDirectories[0];
    const uri = `ahp-terminal:/${newID()}`;
    const params = { channel: uri, claim: { kind: 'client', clientId: this.client.clientId } };
    // Named by what runs in it (the user's shell) and where, until the
    // shell sets a title of its own.
    const base = dir ? decodeURIComponent(dir.replace(/\/+$/, '').split('/').pop() || '') : '';
    params.name = base ? `shell · ${base}` : 'shell';
    if (dir) params.cwd = dir;
    const dims = this.emu && this.uri ? this.emu.fit.proposeDimensions() : null;
    if (dims && dims.cols > 0 && dims.rows > 0) { params.cols = dims.cols; params.rows = dims.rows; }
    try {
      rememberTerminal(uri, this.app.sessionURI);
      await this.client.request('createTerminal', params);
    } catch (e) {
      this.app.toast(`Could not start a terminal: ${e.message}`);
      return;
    }
    await this.select(uri);
  }

  async dispose() {
    const uri = this.uri;
    if (!uri) return;
    try {
      await this.client.request('disposeTerminal', { channel: uri });
    } catch (e) {
      this.app.toast(`Could not close the terminal: ${e.message}`);
      return;
    }
    if (this.uri === uri) this.detach();
  }
}
