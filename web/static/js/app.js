// The ahpd web client: the session list, sessions with their chats, and
// the composer. State comes from the mirrors of client.js; this file only
// turns states into DOM. States are immutable, so a part of the page is
// rebuilt only when the object it shows is a different object.

import { Client, ROOT, newID, modern, takeKept, leaveKept } from './client.js';
import { Status, isoLater } from './reducers.js';
import { StreamView, render as renderMarkdown, enhanceCode } from './markdown.js';
import { h, $, diffView } from './dom.js';
import { TerminalView, LoginTerminal } from './terminal.js';
import { ChangesView } from './changes.js';
import { AutomationsView } from './automations.js';
import { Completer } from './complete.js';
import { plainTitle, elapsedText, agentLabel, agentState, signInMethods, prettyInput, refText, mcpServers, mcpToggle } from './text.js';


/** text returns the plain text of a StringOrMarkdown value. */
function plain(v) {
  if (v == null) return '';
  return typeof v === 'string' ? v : v.markdown || '';
}

/** rich renders a StringOrMarkdown value. */
function rich(v, cls) {
  if (v != null && typeof v === 'object' && typeof v.markdown === 'string') {
    const el = h('div', { class: `md ${cls || ''}` });
    el.innerHTML = renderMarkdown(v.markdown);
    enhanceCode(el);
    return el;
  }
  return h('div', { class: cls || '' }, plain(v));
}

function statusInfo(status) {
  const s = status || 0;
  if ((s & Status.InputNeeded) === Status.InputNeeded) return ['input', 'needs input'];
  if (s & Status.InProgress) return ['busy', 'working'];
  if (s & Status.Error) return ['error', 'error'];
  return ['idle', 'idle'];
}


function ago(iso) {
  const t = Date.parse(iso);
  if (!t) return '';
  const d = (Date.now() - t) / 1000;
  if (d < 60) return 'now';
  if (d < 3600) return `${Math.floor(d / 60)} min`;
  if (d < 86400) return `${Math.floor(d / 3600)} h`;
  return new Date(t).toLocaleDateString();
}

const chatURIOf = (id) => `ahp-chat:/${id}`;

// Session and chat URIs are opaque: the page's address carries them whole,
// encoded, whatever their scheme.
const sessionHash = (uri, chat) => `#/s/${encodeURIComponent(uri)}${chat ? `/c/${encodeURIComponent(chat)}` : ''}`;


// Phones and tablets: Enter makes a new line and the Send button sends.
const touch = () => matchMedia('(pointer: coarse)').matches;

function toFileURI(dir) {
  dir = dir.trim();
  if (!dir) return '';
  if (/^[a-z][a-z0-9+.-]*:/i.test(dir)) return dir;
  return 'file://' + dir.split('/').map(encodeURIComponent).join('/');
}

// ---- application

// Turns fetched per page; ?turns=N in the page URL overrides it.
const TURN_PAGE = Math.max(1, Number(new URLSearchParams(location.search).get('turns')) || 30);
const DRAFT_DELAY = 600;

class App {
  constructor() {
    this.token = this.takeToken();
    this.client = new Client({ url: '/', token: this.token, kept: takeKept(sessionStorage) });
    this.sessionURI = null;
    this.chatURI = null;
    this.showArchived = false;
    this.unwatch = [];
    this.turnEls = new Map(); // turn id -> {turn, el}
    this.activeEl = null; // element of the active turn
    this.partViews = new Map(); // part key -> {part, el, view}
    this.draftTimer = 0;
    this.models = new Map(); // chat URI -> model id chosen in the composer
    this.fetching = false;
    this.terms = new TerminalView(this);
    this.changes = new ChangesView(this);
    this.automations = new AutomationsView(this);

    const c = this.client;
    c.addEventListener('state', (e) => this.onConnection(e.detail));
    c.addEventListener('sessions', () => {
      this.renderSessions();
      const st = this.sessionURI && this.client.state(this.sessionURI);
      if (st) this.renderSession(st);
    });
    c.addEventListener('rejected', (e) => this.toast(`The host refused ${e.detail.action.type}: ${e.detail.reason}`));
    this.bind();
    this.initNotify();
    c.start();
    // The app shell for offline starts and installing to a home screen.
    if ('serviceWorker' in navigator && window.isSecureContext) {
      navigator.serviceWorker.register('/sw.js').catch((e) => console.warn('service worker not registered:', e.message));
    }
    window.addEventListener('hashchange', () => this.route());
    document.addEventListener('visibilitychange', () => this.markRead());
    // The client's identity and mirrors wait in the tab's storage while the
    // page is away (hidden, or unloading for a reload) and are taken back
    // when it shows again: a reload goes on as the same client, while a tab
    // duplicated from a shown page (which copies the storage) finds nothing
    // and is a client of its own.
    const leave = () => leaveKept(sessionStorage, this.client.keep());
    window.addEventListener('pagehide', leave);
    window.addEventListener('pageshow', (e) => { if (e.persisted) takeKept(sessionStorage); });
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'hidden') leave(); else takeKept(sessionStorage);
    });
  }

  // takeToken reads the token from the URL fragment ahpd printed
  // (#token=...), keeps it for this tab and removes it from the address
  // bar, so it is not left in the history or shown on screen.
  takeToken() {
    const m = location.hash.match(/(?:^#|&)token=([^&]*)/);
    if (m) {
      const t = decodeURIComponent(m[1]);
      sessionStorage.setItem('ahpd-token', t);
      history.replaceState(null, '', location.pathname + location.search);
      return t;
    }
    return sessionStorage.getItem('ahpd-token') || '';
  }

  bind() {
    $('#new-session').addEventListener('click', () => this.openCreate());
    $('#create-form').addEventListener('submit', (e) => { e.preventDefault(); this.createSession(); });
    $('#create-cancel').addEventListener('click', () => $('#create-dialog').close());
    $('#show-archived').addEventListener('change', (e) => { this.showArchived = e.target.checked; this.renderSessions(); });
    $('#token-form').addEventListener('submit', (e) => {
      e.preventDefault();
      this.token = $('#token-input').value.trim();
      sessionStorage.setItem('ahpd-token', this.token);
      this.client.token = this.token;
      this.client.stop();
      this.client.start();
    });
    $('#back').addEventListener('click', () => { location.hash = ''; });
    $('#composer').addEventListener('submit', (e) => { e.preventDefault(); this.send('auto'); });
    this.completer = new Completer($('#prompt'), (text, offset) => this.chatURI
      ? this.client.request('completions', { channel: this.chatURI, kind: 'userMessage', text, offset }).then((r) => r.items)
      : Promise.resolve([]));
    $('#prompt').addEventListener('keydown', (e) => {
      if (this.completer.key(e)) return;
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing && !touch()) { e.preventDefault(); this.send('auto'); }
    });
    $('#prompt').placeholder = touch() ? 'Message' : 'Message (Enter sends, Shift+Enter for a new line, Esc cancels a running turn)';
    // Esc cancels the running turn, unless a dialog or menu has it.
    document.addEventListener('keydown', (e) => {
      if (e.key !== 'Escape' || e.defaultPrevented || e.isComposing || document.querySelector('dialog[open]')) return;
      const st = this.chatURI && this.client.state(this.chatURI);
      if (st && st.activeTurn && !$('#session').hidden) { e.preventDefault(); this.cancelTurn(); }
    });
    $('#prompt').addEventListener('input', () => { this.draftChanged(); this.renderSlashHelp(false); });
    $('#help-btn').addEventListener('click', () => this.renderSlashHelp(true));
    $('#c-browse').addEventListener('click', () => this.browseDirs(toFileURI($('#c-dir').value) || (this.client.initResult && this.client.initResult.defaultDirectory) || 'file:///'));
    $('#c-up').addEventListener('click', () => {
      const up = (this.browsing || '').replace(/\/+$/, '').replace(/\/[^/]*$/, '') || 'file:///';
      this.browseDirs(up.endsWith(':/') || up.endsWith(':') ? 'file:///' : up);
    });
    $('#steer').addEventListener('click', () => this.send('steering'));
    $('#queue').addEventListener('click', () => this.send('queued'));
    $('#cancel').addEventListener('click', () => this.cancelTurn());
    $('#model').addEventListener('change', (e) => this.models.set(this.chatURI, e.target.value));
    $('#archive').addEventListener('click', () => this.archive());
    $('#remove').addEventListener('click', () => this.remove());
    $('#new-chat').addEventListener('click', () => this.newChat());
    $('#older').addEventListener('click', () => this.fetchOlder());
    $('#files-tab').addEventListener('click', () => this.openFiles());
    $('#files-close').addEventListener('click', () => this.closeFiles());
    $('#file-edit').addEventListener('click', () => this.editFile());
    $('#file-save').addEventListener('click', () => this.saveFile());
    this.olderObserver = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) this.fetchOlder();
    });
    this.olderObserver.observe($('#older'));
  }

  onConnection({ state, detail }) {
    const banner = $('#conn');
    banner.dataset.state = state;
    const labels = {
      connecting: 'Connecting…', connected: 'Connected', reconnecting: 'Reconnecting…',
      disconnected: 'Connection lost; retrying…', failed: 'Cannot connect', closed: 'Closed',
      unauthorized: this.token ? 'The host refused this token: enter the one ahpd printed' : 'This host needs a token: enter the one ahpd printed',
    };
    const showDetail = detail && state !== 'connected' && state !== 'unauthorized';
    $('#conn-text').textContent = labels[state] + (showDetail ? ` (${detail})` : '');
    document.body.dataset.conn = state;
    // A host that needs a token refuses the upgrade before any message:
    // offer the token field whenever connecting keeps failing.
    const askToken = state === 'unauthorized' || (!this.client.everConnected && this.client.attempt >= 2);
    $('#token-form').hidden = !askToken;
    if (state === 'connected') {
      // The root mirror exists from the first handshake on and stays.
      if (!this.unwatchRoot) this.unwatchRoot = this.client.watch(ROOT, () => this.renderCreateForm());
      $('#version').textContent = `AHP ${this.client.protocolVersion}`;
      this.renderSessions();
      this.renderCreateForm();
      this.automations.updateButton();
      // What a reload kept and the page's address does not reopen goes.
      this.route().finally(() => this.client.releaseKept());
    }
  }

  toast(msg) {
    const t = h('div', { class: 'toast', role: 'status' }, msg);
    $('#toasts').append(t);
    setTimeout(() => t.remove(), 6000);
  }

  // ---- session list

  renderSessions() {
    const list = $('#sessions');
    const items = [...this.client.sessions.values()]
      .filter((s) => this.showArchived || !(s.status & Status.IsArchived))
      .sort((a, b) => (isoLater(a.modifiedAt, b.modifiedAt) ? -1 : isoLater(b.modifiedAt, a.modifiedAt) ? 1 : 0));
    list.replaceChildren(...items.map((s) => {
      const [cls, label] = statusInfo(s.status);
      const unread = !(s.status & Status.IsRead);
      return h('li', { class: `session ${s.resource === this.sessionURI ? 'selected' : ''}`, 'data-uri': s.resource },
        h('a', { href: sessionHash(s.resource) },
          h('span', { class: `dot ${cls}`, title: label }),
          h('span', { class: 'stitle' }, plainTitle(s.title) || 'New Session'),
          unread ? h('span', { class: 'unread', title: 'unread' }, '●') : null,
          s.status & Status.IsArchived ? h('span', { class: 'tag' }, 'archived') : null,
          h('span', { class: 'when' }, ago(s.modifiedAt)),
          h('span', { class: 'activity' }, s.activity || label)));
    }));
    $('#empty-list').hidden = items.length > 0;
    this.markRead();
    this.renderTitle();
    this.notifyChanges();
  }

  // ---- the agent's / commands

  // slashCommands lists what the session's agent can be asked with a
  // leading /: its skills and prompts (name, description).
  slashCommands() {
    const st = this.sessionURI && this.client.state(this.sessionURI);
    const out = [];
    const visit = (list) => {
      for (const c of list || []) {
        if ((c.type === 'skill' || c.type === 'prompt') && c.name && c.userInvocable !== false && !c.disableUserInvocation) {
          out.push({ name: c.name.replace(/^\//, ''), description: plain(c.description) });
        }
        visit(c.children);
      }
    };
    visit(st && st.customizations);
    return out;
  }

  // renderSlashHelp shows the agent's commands under the composer while a
  // command is being typed (or when asked), with the agent's own words.
  renderSlashHelp(asked) {
    const box = $('#slash-help');
    const text = $('#prompt').value;
    const typing = /^\/\S*$/.test(text);
    if (!asked && !typing) { box.hidden = true; return; }
    if (asked && !box.hidden) { box.hidden = true; return; }
    const prefix = typing ? text.slice(1).toLowerCase() : '';
    const cmds = this.slashCommands().filter((c) => c.name.toLowerCase().startsWith(prefix));
    const st = this.sessionURI && this.client.state(this.sessionURI);
    const agent = this.agents().find((a) => st && a.provider === st.provider);
    const rows = cmds.map((c) => h('button', { type: 'button', class: 'slash-cmd', role: 'option',
      onclick: () => { $('#prompt').value = `/${c.name} `; $('#prompt').focus(); box.hidden = true; this.draftChanged(); } },
    h('code', {}, `/${c.name}`), h('span', { class: 'muted' }, c.description || '')));
    const about = agent && plain(agent.description);
    box.replaceChildren(
      h('div', { class: 'slash-title' }, `${(agent && (agent.displayName || agent.provider)) || 'The agent'}'s commands`),
      ...rows,
      !rows.length ? h('div', { class: 'muted' }, cmds.length || !prefix ? 'The agent lists no commands; what it says of itself:' : `No listed command starts with /${prefix}.`) : null,
      about ? h('div', { class: 'slash-about' }, about) : null);
    box.hidden = false;
  }

  // ---- the directory picker of the new-session dialog, browsing the
  // host's folders with resourceList

  async browseDirs(uri) {
    let res;
    try {
      res = await this.client.request('resourceList', { channel: ROOT, uri });
    } catch (e) {
      // Said in the dialog: a toast would sit under it.
      $('#c-browser').hidden = false;
      $('#c-path').textContent = e.code === -32601 ? 'This host does not list folders.' : `Cannot list ${decodeURIComponent(uri.replace(/^file:\/\//, ''))}: ${e.message}`;
      $('#c-dirs').replaceChildren();
      return;
    }
    this.browsing = uri.replace(/\/+$/, '') || 'file://';
    $('#c-browser').hidden = false;
    const path = decodeURIComponent(this.browsing.replace(/^file:\/\//, '')) || '/';
    $('#c-path').textContent = path;
    $('#c-dir').value = path;
    const dirs = (res.entries || []).filter((e) => e.type === 'directory' && !e.name.startsWith('.'))
      .sort((a, b) => a.name.localeCompare(b.name));
    $('#c-dirs').replaceChildren(...dirs.map((d) => h('li', {}, h('button', { type: 'button', class: 'dir',
      onclick: () => this.browseDirs(`${this.browsing}/${encodeURIComponent(d.name)}`) }, d.name))));
    if (!dirs.length) $('#c-dirs').append(h('li', { class: 'muted' }, '(no folders here)'));
  }

  // ---- notifications (off until the user turns them on; the browser
  // asks for permission then, once)

  initNotify() {
    const box = $('#notify');
    const supported = 'Notification' in window;
    box.closest('label').hidden = !supported;
    box.checked = supported && localStorage.getItem('ahpd-notify') === 'on' && Notification.permission === 'granted';
    box.addEventListener('change', async () => {
      if (!box.checked) { localStorage.setItem('ahpd-notify', 'off'); return; }
      let perm = Notification.permission;
      if (perm === 'default') perm = await Notification.requestPermission();
      if (perm !== 'granted') {
        box.checked = false;
        localStorage.setItem('ahpd-notify', 'off');
        this.toast('The browser does not allow notifications from this page.');
        return;
      }
      localStorage.setItem('ahpd-notify', 'on');
    });
  }

  // notifyChanges compares each session's status with the last seen, and
  // tells the user, while the page is hidden, of sessions that came to
  // need them and of turns that ended.
  notifyChanges() {
    const prev = this.lastStatus;
    this.lastStatus = new Map();
    const needs = (x) => (x & Status.InputNeeded) === Status.InputNeeded;
    for (const s of this.client.sessions.values()) {
      this.lastStatus.set(s.resource, s.status);
      const was = prev && prev.get(s.resource);
      if (was === undefined || was === null) continue;
      let what = '';
      if (needs(s.status) && !needs(was)) what = 'needs you';
      else if ((was & Status.InProgress) && !(s.status & Status.InProgress)) what = s.status & Status.Error ? 'the turn failed' : 'the turn ended';
      if (what) this.notify(plainTitle(s.title) || 'New Session', what, s);
    }
  }

  notify(title, what, s) {
    if (document.visibilityState === 'visible' || !$('#notify').checked) return;
    if (!('Notification' in window) || Notification.permission !== 'granted') return;
    const n = new Notification(`${title}: ${what}`, { body: s.activity || '', tag: s.resource, icon: '/icon-192.png' });
    n.onclick = () => { window.focus(); location.hash = sessionHash(s.resource); n.close(); };
  }

  // renderTitle names the open session in the page title, and says when it
  // (or how many others) need the user.
  renderTitle() {
    const needs = (s) => s && !(s.status & Status.IsArchived) && (s.status & Status.InputNeeded) === Status.InputNeeded;
    const cur = this.sessionURI && this.client.sessions.get(this.sessionURI);
    const others = [...this.client.sessions.values()].filter((s) => s !== cur && needs(s)).length;
    let title = 'ahpd';
    if (this.sessionURI) {
      const st = this.client.state(this.sessionURI);
      title = `${plainTitle((cur && cur.title) || (st && st.title)) || 'New Session'} — ahpd`;
      if (needs(cur)) title = `Needs you: ${title}`;
    }
    if (others) title = `(${others}) ${title}`;
    if (document.title !== title) document.title = title;
  }

  // markRead marks the session on screen read, once for each change of its
  // catalog entry that left it unread.
  markRead() {
    const uri = this.sessionURI;
    const sum = uri && this.client.sessions.get(uri);
    if (!sum || (sum.status & Status.IsRead) || document.visibilityState !== 'visible') return;
    if (!this.client.state(uri)) return;
    const mark = `${uri} ${sum.modifiedAt} ${sum.status}`;
    if (this.readMark === mark) return;
    this.readMark = mark;
    this.client.dispatch(uri, { type: 'session/isReadChanged', isRead: true });
  }

  // ---- creating sessions

  agents() {
    const root = this.client.state(ROOT);
    return (root && root.agents) || [];
  }

  renderCreateForm() {
    const sel = $('#c-provider');
    const agents = this.agents();
    const cur = sel.value;
    sel.replaceChildren(...agents.map((a) => {
      const st = agentState(a);
      return h('option', { value: a.provider, 'data-state': st }, st === 'ready' ? agentLabel(a, agents) : `${agentLabel(a, agents)} — ${st}`);
    }));
    if (cur) sel.value = cur;
    this.renderModels();
    this.renderAbout();
    const dir = $('#c-dir');
    if (!dir.value && this.client.initResult && this.client.initResult.defaultDirectory) {
      dir.placeholder = this.client.initResult.defaultDirectory;
    }
  }

  renderModels() {
    const agent = this.agents().find((a) => a.provider === $('#c-provider').value);
    const models = (agent && agent.models) || [];
    $('#c-model').replaceChildren(h('option', { value: '' }, 'default'),
      ...models.map((m) => h('option', { value: m.id }, m.name || m.id)));
  }

  // renderAbout describes the chosen agent: what it is, its state, its
  // models, and the ways to sign it in: a key field for key methods, a
  // button that runs the login in a terminal for the others.
  renderAbout() {
    const a = this.agents().find((x) => x.provider === $('#c-provider').value);
    const box = $('#c-about');
    if (!a) { box.replaceChildren(); return; }
    const st = agentState(a);
    const rows = [h('div', { class: 'about-desc' }, plain(a.description) || 'No description.')];
    const facts = [h('span', { class: `tag agent-state ${st === 'ready' ? 'ready' : 'error'}` }, st), h('span', {}, `provider ${a.provider}`)];
    if ((a.models || []).length) facts.push(h('span', {}, `${a.models.length} model${a.models.length === 1 ? '' : 's'}`));
    rows.push(h('div', { class: 'about-facts muted' }, facts));
    const methods = signInMethods(a);
    if (methods.length) {
      const list = methods.map((m) => {
        if (m.login) {
          return h('div', { class: 'sign-in-row' }, h('span', {}, m.name),
            h('button', { type: 'button', class: 'sign-in-login', onclick: () => this.startLogin(a, m) }, 'Sign in'));
        }
        const input = h('input', { type: 'password', class: 'sign-in-key', autocomplete: 'off', placeholder: m.name, 'aria-label': m.name });
        const go = h('button', { type: 'button', class: 'sign-in-send', onclick: () => this.sendKey(a, m, input, go) }, 'Sign in');
        input.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); go.click(); } });
        return h('div', { class: 'sign-in-row' }, input, go,
          m.docs ? h('a', { href: m.docs, target: '_blank', rel: 'noopener' }, 'get a key') : '');
      });
      rows.push(h('div', { class: 'sign-in' }, h('div', { class: 'muted' }, st === 'ready' ? 'Sign in again:' : 'Sign in:'), ...list));
    }
    box.replaceChildren(...rows);
  }

  // sendKey hands a key to the agent with authenticate; ahpd keeps it and
  // checks the agent with it.
  async sendKey(a, m, input, button) {
    const token = input.value.trim();
    if (!token) { input.focus(); return; }
    button.disabled = true;
    try {
      await this.client.request('authenticate', { resource: m.resource, token });
      input.value = '';
      this.toast(`${a.displayName || a.provider} is signed in.`);
    } catch (e) {
      this.toast(`Sign-in failed: ${e.message}`);
    } finally {
      button.disabled = false;
    }
    this.renderCreateForm();
  }

  // startLogin runs the agent's login in a terminal shown in the dialog.
  async startLogin(a, m) {
    if (this.login) await this.login.close();
    const screen = $('#c-login-screen');
    screen.replaceChildren();
    $('#c-login').hidden = false;
    $('#c-login-title').textContent = `${a.displayName || a.provider}: ${m.name}`;
    $('#c-login-state').textContent = 'running';
    $('#c-login-state').className = 'tag running';
    $('#c-login-close').onclick = () => this.closeLogin();
    this.login = new LoginTerminal(this.client, screen, (code) => {
      $('#c-login-state').textContent = `ended${code != null ? ` (code ${code})` : ''}`;
      $('#c-login-state').className = 'tag';
      const now = this.agents().find((x) => x.provider === a.provider);
      const st = now ? agentState(now) : 'gone';
      this.toast(st === 'ready' ? `${a.displayName || a.provider} is signed in.` : `The login ended; ${a.displayName || a.provider}: ${st}.`);
      this.renderCreateForm();
    });
    try {
      await this.login.start(m.resource);
    } catch (e) {
      this.toast(`Could not start the login: ${e.message}`);
      this.closeLogin();
    }
  }

  async closeLogin() {
    $('#c-login').hidden = true;
    const l = this.login;
    this.login = null;
    if (l) await l.close();
  }

  openCreate() {
    this.renderCreateForm();
    $('#create-dialog').onclose = () => this.closeLogin();
    $('#c-provider').onchange = () => { this.renderModels(); this.renderAbout(); };
    $('#create-dialog').showModal();
  }

  async createSession() {
    // A new session is named <provider>:/<id>, as VS Code names them.
    const agents = this.agents();
    const provider = $('#c-provider').value || (agents[0] && agents[0].provider) || '';
    const uri = /^[a-z][a-z0-9+.-]*$/.test(provider) ? `${provider}:/${newID()}` : `ahp-session:/${newID()}`;
    const params = { channel: uri };
    if (provider) params.provider = provider;
    const dir = toFileURI($('#c-dir').value);
    if (dir) params.workingDirectories = [dir];
    const model = $('#c-model').value;
    try {
      await this.client.request('createSession', params);
    } catch (e) {
      // AuthRequired: the agent's sign-in is shown in this dialog.
      this.toast(e.code === -32007
        ? `${provider} needs sign-in first: sign in above, then create the session.`
        : `Could not create the session: ${e.message}`);
      return;
    }
    $('#create-dialog').close();
    this.pendingModel = model;
    location.hash = sessionHash(uri);
  }

  // ---- routing

  // route opens what the page's address names; the promise it returns
  // settles once the session and chat are subscribed.
  async route() {
    if (!this.client.ready) return;
    if (location.hash.startsWith('#/automations')) {
      this.openSession(null);
      this.automations.show();
      return;
    }
    this.automations.hide();
    const m = location.hash.match(/^#\/s\/([^/]+)(?:\/c\/([^/]+))?/);
    const uri = m ? decodeURIComponent(m[1]) : null;
    const chat = m && m[2] ? decodeURIComponent(m[2]) : null;
    document.body.classList.toggle('in-session', !!uri);
    await this.openSession(uri, chat);
  }

  async openSession(uri, chat) {
    if (uri !== this.sessionURI) {
      this.closeSession();
      this.sessionURI = uri;
      this.renderSessions();
    }
    if (!uri) { $('#session').hidden = true; $('#placeholder').hidden = false; return; }
    $('#session').hidden = false;
    $('#placeholder').hidden = true;
    let st;
    try {
      st = await this.client.subscribe(uri, undefined, 'session');
    } catch (e) {
      this.toast(`Cannot open the session: ${e.message}`);
      return;
    }
    if (uri !== this.sessionURI) return;
    if (!this.unwatch.length) {
      this.unwatch.push(this.client.watch(uri, (s) => this.renderSession(s)));
    }
    this.renderSession(st);
    const chatURI = chat || st.defaultChat || (st.chats && st.chats[0] && st.chats[0].resource);
    if (chatURI) await this.openChat(chatURI);
  }

  closeSession() {
    this.closeFiles();
    this.terms.hide();
    this.terms.detach();
    this.changes.close();
    for (const f of this.unwatch) f();
    this.unwatch = [];
    this.closeChat();
    if (this.sessionURI) this.client.unsubscribe(this.sessionURI);
    this.sessionURI = null;
  }

  renderSession(st) {
    if (!st) {
      this.toast('The session was removed.');
      location.hash = '';
      return;
    }
    $('#s-title').textContent = plainTitle(st.title) || 'New Session';
    // The status dot follows the catalog entry, which rolls up the chats
    // (summary aggregation); the session state's own bits are the fallback.
    // (The session's state carries no URI of its own: look it up by ours.)
    const sum = this.client.sessions.get(this.sessionURI);
    const [cls, label] = statusInfo(sum ? sum.status : st.status);
    $('#s-status').className = `dot ${cls}`;
    $('#s-status').title = label;
    $('#s-activity').textContent = st.activity || '';
    const lifecycle = st.lifecycle === 'creating' ? 'starting…' :
      (st.lifecycle === 'creationFailed' || st.lifecycle === 'failed') ? `failed: ${(st.creationError && st.creationError.message) || ''}` : '';
    $('#s-lifecycle').textContent = lifecycle;
    $('#archive').textContent = st.status & Status.IsArchived ? 'Unarchive' : 'Archive';
    const tabs = $('#chats');
    tabs.replaceChildren(...(st.chats || []).map((c) => {
      const [ccls] = statusInfo(c.status);
      return h('button', {
        class: `tab ${c.resource === this.chatURI ? 'selected' : ''}`, type: 'button', role: 'tab',
        'aria-selected': c.resource === this.chatURI ? 'true' : 'false',
        onclick: () => { this.closeFiles(); this.terms.hide(); this.changes.hide(); location.hash = sessionHash(this.sessionURI, c.resource); },
      }, h('span', { class: `dot ${ccls}` }), plainTitle(c.title) || 'Chat');
    }));
    this.markRead();
    this.renderTitle();
    this.renderComposerOptions();
    this.renderMCP(st);
    this.changes.update();
  }

  // renderMCP shows the session's MCP servers (ahpd's configured ones, and
  // any a plugin brings), each with its transport, its state and a switch
  // that turns it on or off for the session (session/customizationToggled;
  // ahpd applies it from each chat's next prompt).
  renderMCP(st) {
    const servers = mcpServers(st.customizations);
    $('#mcp').hidden = servers.length === 0;
    $('#mcp-list').replaceChildren(...servers.map((m) => {
      const box = h('input', { type: 'checkbox', 'aria-label': `${m.name} on` });
      box.checked = m.enabled;
      box.addEventListener('change', () => this.toggleMCP(m.id, box.checked));
      const title = [m.transport, m.label, m.error].filter(Boolean).join(' · ');
      return h('label', { class: 'mcp-server', 'data-id': m.id, 'data-state': m.state, title },
        box, h('span', { class: 'name' }, m.name),
        m.transport ? h('span', { class: 'transport' }, m.transport) : null,
        h('span', { class: `tag ${m.state === 'ready' ? 'ready' : m.state === 'error' ? 'error' : m.state === 'starting' ? 'starting' : ''}` }, m.label));
    }));
  }

  toggleMCP(id, on) {
    const st = this.client.state(this.sessionURI);
    let found = null;
    const visit = (list) => { for (const c of list || []) { if (c.type === 'mcpServer' && c.id === id) found = c; visit(c.children); } };
    visit(st && st.customizations);
    if (!found) return;
    this.client.dispatch(this.sessionURI, mcpToggle(found, on, modern(this.client.protocolVersion)));
  }

  archive() {
    const st = this.client.state(this.sessionURI);
    if (!st) return;
    this.client.dispatch(this.sessionURI, { type: 'session/isArchivedChanged', isArchived: !(st.status & Status.IsArchived) });
  }

  async remove() {
    const uri = this.sessionURI;
    if (!uri || !confirm('Remove this session and its history?')) return;
    try {
      location.hash = '';
      await this.client.request('disposeSession', { channel: uri });
    } catch (e) {
      this.toast(`Could not remove the session: ${e.message}`);
    }
  }

  async newChat() {
    const id = newID();
    try {
      await this.client.request('createChat', { channel: this.sessionURI, chat: chatURIOf(id) });
      location.hash = sessionHash(this.sessionURI, chatURIOf(id));
    } catch (e) {
      this.toast(`Could not create the chat: ${e.message}`);
    }
  }

  // ---- chat

  async openChat(uri) {
    this.closeFiles();
    this.terms.hide();
    this.changes.hide();
    if (uri === this.chatURI) return;
    this.closeChat();
    this.chatURI = uri;
    let st;
    try {
      st = await this.client.subscribe(uri, { turns: TURN_PAGE }, 'chat');
    } catch (e) {
      this.toast(`Cannot open the chat: ${e.message}`);
      return;
    }
    if (uri !== this.chatURI) return;
    this.chatUnwatch = this.client.watch(uri, (s) => this.renderChat(s));
    // The composer starts from the chat's draft.
    $('#prompt').value = (st.draft && st.draft.text) || '';
    this.seenDraft = $('#prompt').value;
    if (this.pendingModel) { this.models.set(uri, this.pendingModel); this.pendingModel = ''; }
    this.renderSession(this.client.state(this.sessionURI));
    this.renderChat(st);
    this.scrollToEnd(true);
  }

  closeChat() {
    if (this.chatUnwatch) this.chatUnwatch();
    this.chatUnwatch = null;
    this.flushDraft();
    if (this.chatURI) this.client.unsubscribe(this.chatURI);
    this.chatURI = null;
    this.turnEls.clear();
    this.partViews.clear();
    this.activeEl = null;
    $('#turns').replaceChildren();
    $('#active').replaceChildren();
    $('#pending').replaceChildren();
  }

  renderChat(st) {
    if (!st) { this.toast('The chat was removed.'); this.closeChat(); return; }
    const log = $('#log');
    const nearEnd = log.scrollHeight - log.scrollTop - log.clientHeight < 80;
    const beforeHeight = log.scrollHeight;
    const firstBefore = $('#turns').firstElementChild;

    // Completed turns: build each once, in order.
    const container = $('#turns');
    const seen = new Set();
    let prev = null;
    for (const t of st.turns) {
      seen.add(t.id);
      let e = this.turnEls.get(t.id);
      if (!e && this.activeEl && this.activeEl.dataset.turn === t.id) {
        // The active turn just ended: its element becomes the turn's, so
        // nothing already on screen is built or laid out again.
        const el = this.activeEl;
        this.activeEl = null;
        el.className = `turn state-${t.state}`;
        this.fillTurn(el, t, false);
        e = { turn: t, el };
        this.turnEls.set(t.id, e);
      } else if (!e || e.turn !== t) {
        const el = this.renderTurn(t, false);
        if (e) e.el.replaceWith(el);
        e = { turn: t, el };
        this.turnEls.set(t.id, e);
      }
      const want = prev ? prev.nextSibling : container.firstChild;
      if (want !== e.el) container.insertBefore(e.el, want);
      prev = e.el;
    }
    for (const [id, e] of this.turnEls) if (!seen.has(id)) { e.el.remove(); this.turnEls.delete(id); }

    // The active turn, part by part.
    const active = $('#active');
    if (st.activeTurn) {
      if (!this.activeEl || this.activeEl.dataset.turn !== st.activeTurn.id) {
        this.activeEl = h('article', { class: 'turn active', 'data-turn': st.activeTurn.id });
        active.replaceChildren(this.activeEl);
      }
      this.fillTurn(this.activeEl, st.activeTurn, true);
    } else if (this.activeEl) {
      this.activeEl = null;
      active.replaceChildren();
    }

    // Only the latest turn can be resumed, and only while none runs.
    const lastEl = container.lastElementChild;
    for (const b of container.querySelectorAll('.resume')) b.hidden = !!st.activeTurn || !lastEl || !lastEl.contains(b);

    this.followDraft(st);
    this.renderPending(st);
    this.changes.update();
    $('#older').hidden = !st.turnsNextCursor;
    const busy = !!st.activeTurn;
    $('#send').hidden = busy;
    $('#steer').hidden = !busy;
    $('#queue').hidden = !busy;
    $('#cancel').hidden = !busy;
    document.body.dataset.turn = busy ? 'active' : 'idle';
    this.tickElapsed(busy);

    if (firstBefore && container.firstElementChild !== firstBefore && !nearEnd) {
      // Older turns went in above: keep what the reader was looking at.
      log.scrollTop += log.scrollHeight - beforeHeight;
    } else if (nearEnd) {
      this.scrollToEnd();
    }
  }

  // tickElapsed keeps the running turn's elapsed time current, once a
  // second while a turn runs.
  tickElapsed(busy) {
    if (busy && !this.elapsedTimer) {
      this.elapsedTimer = setInterval(() => {
        for (const el of document.querySelectorAll('#active .elapsed')) el.textContent = elapsedText(el.dataset.started);
      }, 1000);
    } else if (!busy && this.elapsedTimer) {
      clearInterval(this.elapsedTimer);
      this.elapsedTimer = 0;
    }
  }

  scrollToEnd(force) {
    const log = $('#log');
    if (force) log.scrollTop = log.scrollHeight;
    else requestAnimationFrame(() => { log.scrollTop = log.scrollHeight; });
  }

  async fetchOlder() {
    const st = this.client.state(this.chatURI);
    if (!st || !st.turnsNextCursor || this.fetching) return;
    this.fetching = true;
    const uri = this.chatURI;
    try {
      await this.client.request('fetchTurns', { channel: uri, cursor: st.turnsNextCursor });
    } catch (e) {
      this.toast(`Could not load older turns: ${e.message}`);
    } finally {
      this.fetching = false;
    }
    // Keep paging while the top of the chat is on screen.
    requestAnimationFrame(() => {
      const r = $('#older').getBoundingClientRect();
      if (!$('#older').hidden && r.bottom > 0 && r.top < innerHeight) this.fetchOlder();
    });
  }

  renderTurn(t, live) {
    const el = h('article', { class: `turn state-${t.state || 'active'}`, 'data-turn': t.id });
    this.fillTurn(el, t, live);
    return el;
  }

  // fillTurn builds or updates the element of one turn. Parts keep their
  // elements across updates; a part is rebuilt only when it changed.
  fillTurn(el, t, live) {
    if (!el.firstChild) {
      const msg = t.message || {};
      const meta = [];
      if (msg.model && msg.model.id) meta.push(h('span', { class: 'model', title: 'model' }, msg.model.id));
      if (msg.agent && msg.agent.uri) meta.push(h('span', { class: 'agent', title: 'agent' }, msg.agent.uri.split('/').pop()));
      if (msg.origin && msg.origin.kind && msg.origin.kind !== 'user') meta.push(h('span', { class: 'tag' }, msg.origin.kind));
      el.append(h('div', { class: 'user' }, bubble(msg.text || ''), meta.length ? h('div', { class: 'meta' }, meta) : null),
        h('div', { class: 'parts' }), h('footer', { class: 'turn-foot' }));
    }
    const partsEl = el.querySelector('.parts');
    const keep = new Set();
    let prev = null;
    t.responseParts.forEach((p, i) => {
      const key = `${t.id}/${p.kind}/${p.id || (p.toolCall && p.toolCall.toolCallId) || (p.request && p.request.id) || i}`;
      keep.add(key);
      let v = this.partViews.get(key);
      if (!v || v.part !== p || (v.live !== live && !v.view)) v = this.renderPart(key, p, v, t, live);
      const want = prev ? prev.nextSibling : partsEl.firstChild;
      if (want !== v.el) partsEl.insertBefore(v.el, want);
      prev = v.el;
    });
    for (const child of [...partsEl.children]) if (!keep.has(child.dataset.key)) child.remove();
    for (const key of this.partViews.keys()) if (key.startsWith(`${t.id}/`) && !keep.has(key)) this.partViews.delete(key);
    el.querySelector('.turn-foot').replaceChildren(...this.turnFooter(t, live));
  }

  turnFooter(t, live) {
    const out = [];
    if (live) {
      out.push(h('span', { class: 'spinner', 'aria-label': 'working' }),
        h('span', { class: 'elapsed', 'data-started': t.startedAt || '' }, elapsedText(t.startedAt)));
      const st = this.client.state(this.chatURI);
      const activity = (st && st.activity) || '';
      if (activity) out.push(h('span', { class: 'activity' }, activity));
    }
    if (t.state === 'cancelled') out.push(h('span', { class: 'tag' }, 'cancelled'));
    if (t.state === 'error') {
      // An error part already shows its message in the turn: the footer
      // only says the turn failed (1.x); before, the turn carried it.
      const part = t.responseParts.find((p) => p.kind === 'error');
      const err = part ? null : t.error;
      out.push(h('span', { class: 'tag error' }, `error${err && err.message ? `: ${err.message}` : ''}`));
      const last = t.responseParts[t.responseParts.length - 1];
      if (last && last.kind === 'error' && last.resumable === true) {
        out.push(h('button', { type: 'button', class: 'primary resume', onclick: () => this.resumeTurn(t) }, 'Resume'));
      }
    }
    const u = t.usage;
    if (u) {
      const bits = [];
      if (u.model) bits.push(u.model);
      if (u.inputTokens != null) bits.push(`${u.inputTokens} in`);
      if (u.outputTokens != null) bits.push(`${u.outputTokens} out`);
      out.push(h('span', { class: 'usage' }, bits.join(' · ')));
    }
    if (t.duration != null) out.push(h('span', { class: 'duration' }, `${(t.duration / 1000).toFixed(1)} s`));
    return out;
  }

  // resumeTurn reopens the latest turn, stopped at a resumable error.
  resumeTurn(t) {
    this.client.dispatch(this.chatURI, { type: 'chat/turnResume', turnId: t.id });
  }

  renderPart(key, p, old, t, live) {
    let v = old;
    switch (p.kind) {
      case 'markdown':
      case 'reasoning': {
        if (!v) {
          const body = h('div', { class: 'stream' });
          let el = body;
          if (p.kind === 'reasoning') {
            el = h('details', { class: 'reasoning' }, h('summary', {}, 'Reasoning'), body);
          }
          el.dataset.key = key;
          v = { el, view: new StreamView(body) };
          this.partViews.set(key, v);
        }
        v.view.update(p.content);
        break;
      }
      default: {
        const el = this.renderOther(p, t, live);
        el.dataset.key = key;
        if (v) v.el.replaceWith(el);
        v = { el };
        this.partViews.set(key, v);
      }
    }
    v.part = p;
    v.live = live;
    return v;
  }

  renderOther(p, t, live) {
    switch (p.kind) {
      case 'toolCall': return this.renderToolCall(p.toolCall, t, live);
      case 'inputRequest': return this.renderInput(p, t, live);
      case 'error': return h('div', { class: 'part error' }, (p.error && p.error.message) || 'error');
      case 'systemNotification': return h('div', { class: 'part note' }, plain(p.content || p.message));
      case 'contentRef': return h('div', { class: 'part note' }, `attachment: ${p.title || p.uri || ''}`);
      default: return h('div', { class: 'part note' }, `(${p.kind})`);
    }
  }

  renderToolCall(tc, t, live) {
    const el = h('div', { class: `part tool status-${tc.status}` });
    el.append(h('div', { class: 'tool-head' },
      h('span', { class: 'tool-name' }, tc.displayName || tc.toolName),
      h('span', { class: 'tag' }, tc.status.replace(/-/g, ' ')),
      tc.status === 'completed' && tc.success === false ? h('span', { class: 'tag error' }, 'failed') : null));
    const msg = tc.status === 'completed' && tc.pastTenseMessage ? tc.pastTenseMessage : tc.invocationMessage;
    if (msg) el.append(rich(msg, 'tool-msg'));
    if (tc.status === 'pending-confirmation' && tc.confirmationTitle) el.append(rich(tc.confirmationTitle, 'tool-confirm-title'));
    const input = tc.toolInput != null ? tc.toolInput : tc.partialInput;
    if (input != null) {
      el.append(h('details', { class: 'tool-input', open: tc.status === 'pending-confirmation' || undefined },
        h('summary', {}, 'Input'), h('pre', {}, prettyInput(input))));
    }
    if (tc.edits && Array.isArray(tc.edits.items || tc.edits)) {
      for (const e of (tc.edits.items || tc.edits)) el.append(this.renderEdit(e));
    }
    if ((tc.content || []).length) {
      el.append(h('div', { class: 'tool-output' }, h('div', { class: 'tool-label' }, 'Output'),
        tc.content.map((c) => this.renderToolContent(c))));
    }
    if (tc.error && tc.error.message) el.append(h('div', { class: 'tag error' }, tc.error.message));
    if (tc.status === 'cancelled') el.append(h('div', { class: 'muted' }, `cancelled (${tc.reason})${tc.reasonMessage ? `: ${plain(tc.reasonMessage)}` : ''}`));
    if (tc.status === 'pending-confirmation' && live) {
      const opts = tc.options && tc.options.length ? tc.options :
        [{ id: '', label: 'Allow', kind: 'approve' }, { id: '', label: 'Deny', kind: 'deny' }];
      el.append(h('div', { class: 'actions' }, opts.map((o) => h('button', {
        type: 'button', class: o.kind === 'approve' ? 'primary' : '',
        onclick: () => this.confirmTool(t, tc, o),
      }, o.label))));
    }
    if (tc.status === 'pending-result-confirmation' && live) {
      el.append(h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'primary', onclick: () => this.client.dispatch(this.chatURI, { type: 'chat/toolCallResultConfirmed', turnId: t.id, toolCallId: tc.toolCallId, approved: true }) }, 'Accept result'),
        h('button', { type: 'button', onclick: () => this.client.dispatch(this.chatURI, { type: 'chat/toolCallResultConfirmed', turnId: t.id, toolCallId: tc.toolCallId, approved: false }) }, 'Reject result')));
    }
    return el;
  }

  renderToolContent(c) {
    switch (c.type) {
      case 'text': return h('pre', { class: 'tool-out' }, c.text);
      case 'fileEdit': return this.renderEdit(c);
      case 'terminal': return h('div', { class: 'muted' }, 'terminal ',
        h('button', { type: 'button', class: 'link', onclick: () => this.terms.show(c.resource) }, c.title || 'open'));
      default: return h('div', { class: 'muted' }, `(${c.type} result)`);
    }
  }

  // renderEdit shows a file edit: the file and, when the edit carries the
  // text of both sides, a line diff of them.
  renderEdit(e) {
    const file = (e.after && e.after.uri) || (e.before && e.before.uri) || e.uri || e.resource || '';
    const stats = e.diff ? ` +${e.diff.added ?? e.diff.insertions ?? 0} −${e.diff.removed ?? e.diff.deletions ?? 0}` : '';
    const box = h('div', { class: 'edit' }, h('div', { class: 'edit-file' }, `${decodeURIComponent(file.replace(/^file:\/\//, ''))}${stats}`));
    // Each side's text: inline (a data: URI, as agents send small files),
    // or read from the host when the edit only names the file.
    const side = (s) => (s ? refText(s.content ?? s.text) : '');
    const before = side(e.before);
    const after = side(e.after);
    if (before !== null && after !== null) {
      if (e.before || e.after) box.append(diffView(before, after));
      return box;
    }
    const read = async (s) => {
      if (!s) return '';
      const t = refText(s.content ?? s.text);
      if (t !== null) return t;
      const uri = (s.content && s.content.uri) || s.uri;
      const res = await this.client.request('resourceRead', { channel: ROOT, uri, encoding: 'utf-8' });
      if (res.encoding !== 'utf-8') throw new Error('not text');
      return res.data;
    };
    const wait = h('div', { class: 'muted' }, 'loading the diff…');
    box.append(wait);
    Promise.all([read(e.before), read(e.after)]).then(([b, a]) => wait.replaceWith(diffView(b, a)),
      (err) => { wait.textContent = `the diff cannot be shown: ${err.message}`; });
    return box;
  }

  confirmTool(t, tc, option) {
    const approve = option.kind === 'approve';
    const a = { type: 'chat/toolCallConfirmed', turnId: t.id, toolCallId: tc.toolCallId, approved: approve };
    if (approve) a.confirmed = 'user-action'; else a.reason = 'denied';
    if (option.id) a.selectedOptionId = option.id;
    this.client.dispatch(this.chatURI, a);
  }

  renderInput(p, t, live) {
    const req = p.request;
    const el = h('form', { class: 'part input' });
    // The echo agent, like others, asks one question with the request's
    // own message: show it once.
    const qs = req.questions || [];
    const sameAsQuestion = qs.length === 1 && (qs[0].title || qs[0].message) === req.message;
    if (req.message && !sameAsQuestion) el.append(h('div', { class: 'input-msg' }, req.message));
    if (req.url) el.append(h('a', { href: req.url, target: '_blank', rel: 'noopener noreferrer' }, req.url));
    const fields = [];
    for (const q of req.questions || []) {
      const id = `q-${req.id}-${q.id}`;
      const answer = req.answers && req.answers[q.id];
      const val = answer && answer.value ? answer.value.value : undefined;
      let input;
      switch (q.kind) {
        case 'boolean':
          input = h('input', { type: 'checkbox', id, checked: val ?? q.defaultValue });
          break;
        case 'number':
          input = h('input', { type: 'number', id, value: val ?? q.defaultValue ?? '', min: q.min, max: q.max });
          break;
        case 'single-select':
        case 'multi-select':
          input = h('select', { id, multiple: q.kind === 'multi-select' },
            (q.options || []).map((o) => h('option', { value: o.id }, o.label || o.id)));
          break;
        default:
          input = h('input', { type: 'text', id, value: val ?? q.defaultValue ?? '', required: q.required });
      }
      input.disabled = !live || p.response != null;
      fields.push({ q, input });
      el.append(h('label', { for: id, class: sameAsQuestion ? 'input-msg' : '' }, q.title || q.message), input);
    }
    if (p.response != null) {
      el.append(h('div', { class: 'muted' }, `answered (${p.response})`));
      return el;
    }
    if (!live) return el;
    el.append(h('div', { class: 'actions' },
      h('button', { type: 'submit', class: 'primary' }, 'Submit'),
      h('button', { type: 'button', onclick: () => this.client.dispatch(this.chatURI, { type: 'chat/inputCompleted', requestId: req.id, response: 'decline' }) }, 'Decline')));
    el.addEventListener('submit', (e) => {
      e.preventDefault();
      const answers = {};
      for (const { q, input } of fields) {
        let value;
        switch (q.kind) {
          case 'boolean': value = { kind: 'boolean', value: input.checked }; break;
          case 'number': value = { kind: 'number', value: Number(input.value) }; break;
          case 'single-select': value = { kind: 'selected', value: input.value }; break;
          case 'multi-select': value = { kind: 'selectedMany', value: [...input.selectedOptions].map((o) => o.value) }; break;
          default: value = { kind: 'text', value: input.value };
        }
        answers[q.id] = { state: 'submitted', value };
      }
      this.client.dispatch(this.chatURI, { type: 'chat/inputCompleted', requestId: req.id, response: 'accept', answers });
    });
    return el;
  }

  renderPending(st) {
    const box = $('#pending');
    const rows = [];
    const row = (kind, m) => h('div', { class: `pending ${kind}` },
      h('span', { class: 'tag' }, kind), h('span', { class: 'ptext' }, m.message.text),
      h('button', { type: 'button', class: 'link', onclick: () => this.client.dispatch(this.chatURI, { type: 'chat/pendingMessageRemoved', kind, id: m.id }) }, 'remove'));
    if (st.steeringMessage) rows.push(row('steering', st.steeringMessage));
    for (const m of st.queuedMessages || []) rows.push(row('queued', m));
    box.replaceChildren(...rows);
  }

  // ---- files (the resource* commands, where the host serves them)

  openFiles() {
    this.terms.hide();
    this.changes.hide();
    const st = this.client.state(this.sessionURI);
    const root = st && st.workingDirectories && st.workingDirectories[0];
    if (!root) { this.toast('This session has no working directory to browse.'); return; }
    document.body.classList.add('files-open');
    $('#files').hidden = false;
    $('#files-tab').classList.add('selected');
    this.filesRoot = root.replace(/\/+$/, '');
    this.listDir(this.filesRoot);
  }

  closeFiles() {
    document.body.classList.remove('files-open');
    $('#files').hidden = true;
    $('#files-tab').classList.remove('selected');
  }

  async listDir(uri) {
    let res;
    try {
      res = await this.client.request('resourceList', { channel: ROOT, uri });
    } catch (e) {
      this.toast(e.code === -32601 ? 'This host does not serve files.' : `Cannot list ${uri}: ${e.message}`);
      return;
    }
    this.dirURI = uri;
    $('#file-view').hidden = true;
    // Breadcrumbs from the session's directory down to this one.
    const rel = uri.slice(this.filesRoot.length).split('/').filter(Boolean);
    const crumbs = [h('button', { type: 'button', class: 'link', onclick: () => this.listDir(this.filesRoot) },
      decodeURIComponent(this.filesRoot.split('/').pop() || '/'))];
    rel.forEach((part, i) => {
      const target = this.filesRoot + '/' + rel.slice(0, i + 1).join('/');
      crumbs.push(' / ', h('button', { type: 'button', class: 'link', onclick: () => this.listDir(target) }, decodeURIComponent(part)));
    });
    $('#crumbs').replaceChildren(...crumbs);
    const entries = (res.entries || []).slice().sort((a, b) =>
      (a.type === 'directory' ? 0 : 1) - (b.type === 'directory' ? 0 : 1) || a.name.localeCompare(b.name));
    $('#entries').replaceChildren(...entries.map((e) => {
      const target = `${uri}/${encodeURIComponent(e.name)}`;
      const dir = e.type === 'directory';
      return h('li', {}, h('button', { type: 'button', class: dir ? 'dir' : 'file',
        onclick: () => (dir ? this.listDir(target) : this.readFile(target, e.name)) }, e.name));
    }));
    if (!entries.length) $('#entries').append(h('li', { class: 'muted' }, '(empty)'));
  }

  async readFile(uri, name) {
    let res;
    try {
      res = await this.client.request('resourceRead', { channel: ROOT, uri, encoding: 'utf-8' });
    } catch (e) {
      this.toast(`Cannot read ${name}: ${e.message}`);
      return;
    }
    this.fileURI = uri;
    $('#file-view').hidden = false;
    $('#file-name').textContent = name;
    const text = res.encoding === 'utf-8';
    $('#file-info').textContent = text ? '' : `binary, ${Math.floor(res.data.length * 3 / 4).toLocaleString()} bytes`;
    $('#file-text').textContent = text ? res.data : '';
    $('#file-text').hidden = false;
    $('#file-editor').hidden = true;
    $('#file-edit').hidden = !text;
    $('#file-save').hidden = true;
  }

  editFile() {
    $('#file-editor').value = $('#file-text').textContent;
    $('#file-editor').hidden = false;
    $('#file-text').hidden = true;
    $('#file-edit').hidden = true;
    $('#file-save').hidden = false;
    $('#file-editor').focus();
  }

  async saveFile() {
    const data = $('#file-editor').value;
    try {
      await this.client.request('resourceWrite', { channel: ROOT, uri: this.fileURI, data, encoding: 'utf-8' });
    } catch (e) {
      this.toast(`Cannot save: ${e.message}`);
      return;
    }
    $('#file-text').textContent = data;
    $('#file-text').hidden = false;
    $('#file-editor').hidden = true;
    $('#file-edit').hidden = false;
    $('#file-save').hidden = true;
    this.toast('Saved.');
  }

  // ---- composer

  renderComposerOptions() {
    const st = this.client.state(this.sessionURI);
    const agent = this.agents().find((a) => st && a.provider === st.provider);
    const models = (agent && agent.models) || [];
    const sel = $('#model');
    const chosen = this.models.get(this.chatURI) || '';
    sel.replaceChildren(h('option', { value: '' }, 'default model'),
      ...models.map((m) => h('option', { value: m.id }, m.name || m.id)));
    sel.value = chosen;
    sel.hidden = models.length === 0;
    // Agents a message can address: the session's agent customizations.
    const agents = [];
    for (const c of (st && st.customizations) || []) {
      for (const k of c.children || []) if (k.type === 'agent' && k.uri) agents.push(k);
    }
    const asel = $('#agent');
    const achosen = asel.value;
    asel.replaceChildren(h('option', { value: '' }, 'default agent'),
      ...agents.map((a) => h('option', { value: a.uri }, a.name || a.uri)));
    asel.value = achosen;
    asel.hidden = agents.length === 0;
  }

  message(text) {
    const m = { text, origin: { kind: 'user' } };
    const attachments = this.completer.take(text);
    if (attachments.length) m.attachments = attachments;
    const model = $('#model').value;
    if (model) m.model = { id: model };
    const agent = $('#agent').value;
    if (agent) m.agent = { uri: agent };
    return m;
  }

  send(mode) {
    const text = $('#prompt').value.trim();
    const st = this.client.state(this.chatURI);
    if (!text || !st) return;
    const msg = this.message(text);
    if (st.activeTurn && mode === 'auto') mode = 'queued';
    if (mode === 'steering' || mode === 'queued') {
      this.client.dispatch(this.chatURI, { type: 'chat/pendingMessageSet', kind: mode, id: newID(), message: msg });
    } else {
      this.client.dispatch(this.chatURI, { type: 'chat/turnStarted', turnId: newID(), startedAt: new Date().toISOString(), message: msg });
    }
    $('#prompt').value = '';
    $('#slash-help').hidden = true;
    this.seenDraft = '';
    clearTimeout(this.draftTimer);
    this.draftTimer = 0;
    if (st.draft) this.client.dispatch(this.chatURI, { type: 'chat/draftChanged' });
    this.scrollToEnd();
  }

  // followDraft keeps the composer on the chat's shared draft while the
  // user has not changed it here: another client's edit shows, and a send
  // from anywhere clears it.
  followDraft(st) {
    const text = (st.draft && st.draft.text) || '';
    if (text === this.seenDraft) return;
    const prompt = $('#prompt');
    if (!this.draftTimer && prompt.value === (this.seenDraft || '')) prompt.value = text;
    this.seenDraft = text;
  }

  // draftChanged syncs the composer into the chat's draft, at most once
  // per DRAFT_DELAY while the user types.
  draftChanged() {
    clearTimeout(this.draftTimer);
    this.draftTimer = setTimeout(() => this.flushDraft(), DRAFT_DELAY);
  }

  flushDraft() {
    if (!this.draftTimer || !this.chatURI) return;
    clearTimeout(this.draftTimer);
    this.draftTimer = 0;
    const text = $('#prompt').value;
    const st = this.client.state(this.chatURI);
    if (!st || ((st.draft && st.draft.text) || '') === text) return;
    this.seenDraft = text;
    this.client.dispatch(this.chatURI, text ? { type: 'chat/draftChanged', draft: { text, origin: { kind: 'user' } } } : { type: 'chat/draftChanged' });
  }

  cancelTurn() {
    const st = this.client.state(this.chatURI);
    if (!st || !st.activeTurn) return;
    const started = Date.parse(st.activeTurn.startedAt);
    this.client.dispatch(this.chatURI, { type: 'chat/turnCancelled', turnId: st.activeTurn.id, duration: started ? Math.max(0, Date.now() - started) : 0 });
  }
}



// A message longer than this shows its beginning and a button for the
// rest: laying out a very long message would hold the page for a while.
const BUBBLE_LIMIT = 2000;

function bubble(text) {
  if (text.length <= BUBBLE_LIMIT) return h('div', { class: 'bubble' }, text);
  const el = h('div', { class: 'bubble long' }, text.slice(0, BUBBLE_LIMIT) + '…');
  const more = h('button', { type: 'button', class: 'link' }, `show all ${text.length.toLocaleString()} characters`);
  more.addEventListener('click', () => { el.textContent = text; });
  el.append(h('br'), more);
  return el;
}

window.ahpApp = new App();
