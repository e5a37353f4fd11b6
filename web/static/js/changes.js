// The changeset view: the changesets a session and its chat advertise
// (their `changesets` catalogues), one of them shown file by file with
// line diffs, the "Viewed" flag where the changeset offers review, and
// the operations the host declares (revert a file or some lines, commit,
// and so on), invoked with invokeChangesetOperation.
//
// A catalogue entry names a URI template. Only the variables the protocol
// defines are expanded ({turnId}, or {originalTurnId} with
// {modifiedTurnId}), with turns of the chat on screen; an entry with any
// other variable is left out, as the protocol asks. File contents are
// content references, read with resourceRead when a file is opened.

import { h, $, diffLines, diffLine } from './dom.js';
import { ROOT } from './client.js';

const KNOWN = new Set(['turnId', 'originalTurnId', 'modifiedTurnId']);

/** templateVars returns the variables of a URI template, or null when it has one this page cannot fill. */
export function templateVars(template) {
  const vars = [...template.matchAll(/\{([^}]*)\}/g)].map((m) => m[1]);
  if (vars.some((v) => !KNOWN.has(v))) return null;
  const compare = vars.includes('originalTurnId') || vars.includes('modifiedTurnId');
  if (compare && !(vars.includes('originalTurnId') && vars.includes('modifiedTurnId'))) return null;
  return [...new Set(vars)];
}

// encode is RFC 6570 simple string expansion: all but unreserved
// characters percent-encoded.
const encode = (v) => encodeURIComponent(v).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** expand fills a URI template's variables from values. */
export function expand(template, values) {
  return template.replace(/\{([^}]*)\}/g, (_, name) => encode(values[name] ?? ''));
}

const plain = (v) => (v == null ? '' : typeof v === 'string' ? v : v.markdown || '');

// What an edit did to its file, from which sides it has.
function editKind(e) {
  if (!e.before) return 'added';
  if (!e.after) return 'deleted';
  if (e.before.uri !== e.after.uri) return 'renamed';
  return 'modified';
}

export class ChangesView {
  constructor(app) {
    this.app = app;
    this.client = app.client;
    this.entry = null; // the chosen catalogue entry: {c, from}
    this.uri = null; // the expanded changeset URI subscribed to
    this.values = {}; // template variables chosen
    this.unwatch = null;
    this.open = new Set(); // ids of the files shown with their diff
    this.diffs = new WeakMap(); // a file's edit -> the element of its diff
    this.rows = new Map(); // file id -> {f, ops, open, el}
    $('#changes-tab').addEventListener('click', () => this.show());
    $('#changes-close').addEventListener('click', () => this.hide());
  }

  get shown() { return !$('#changes').hidden; }

  show() {
    this.app.closeFiles();
    this.app.terms.hide();
    document.body.classList.add('changes-open');
    $('#changes').hidden = false;
    $('#changes-tab').classList.add('selected');
    this.renderCatalogue();
  }

  hide() {
    document.body.classList.remove('changes-open');
    $('#changes').hidden = true;
    $('#changes-tab').classList.remove('selected');
  }

  // detach unsubscribes from the changeset shown.
  detach() {
    if (this.unwatch) this.unwatch();
    this.unwatch = null;
    if (this.uri) this.client.unsubscribe(this.uri);
    this.uri = null;
    this.open.clear();
    this.rows.clear();
    $('#cs-files').replaceChildren();
  }

  // close forgets the session's changesets (another session opens).
  close() {
    this.hide();
    this.detach();
    this.entry = null;
    this.values = {};
  }

  // catalogue lists the entries of the session and of the chat on screen
  // whose templates this page can expand.
  catalogue() {
    const ss = this.app.sessionURI && this.client.state(this.app.sessionURI);
    const cs = this.app.chatURI && this.client.state(this.app.chatURI);
    const out = [];
    const seen = new Set();
    for (const [from, list] of [['session', ss && ss.changesets], ['chat', cs && cs.changesets]]) {
      for (const c of list || []) {
        const vars = templateVars(c.uriTemplate || '');
        // The chat's catalogue may repeat the session's entries.
        if (!vars || seen.has(c.uriTemplate)) continue;
        seen.add(c.uriTemplate);
        out.push({ c, from, vars, key: `${from} ${c.uriTemplate}` });
      }
    }
    return out;
  }

  // update follows the session's and the chat's states while shown.
  update() {
    if (!this.shown) return;
    const list = this.catalogue();
    const sig = list.map((e) => `${e.key} ${e.c.label}`).join('\n');
    const turns = this.turns().map((t) => t.id).join(' ');
    if (sig === this.sig && turns === this.turnSig) return;
    this.renderCatalogue();
  }

  turns() {
    const cs = this.app.chatURI && this.client.state(this.app.chatURI);
    return ((cs && cs.turns) || []).slice().reverse();
  }

  renderCatalogue() {
    const list = this.catalogue();
    this.sig = list.map((e) => `${e.key} ${e.c.label}`).join('\n');
    this.turnSig = this.turns().map((t) => t.id).join(' ');
    $('#cs-empty').hidden = list.length > 0;
    if (this.entry && !list.some((e) => e.key === this.entry.key)) {
      this.detach();
      this.entry = null;
    }
    if (!this.entry && list.length) this.entry = list[0];
    else if (this.entry) this.entry = list.find((e) => e.key === this.entry.key);
    $('#cs-list').replaceChildren(...list.map((e) => {
      const on = this.entry && e.key === this.entry.key;
      return h('button', {
        type: 'button', role: 'tab', class: `tab ${on ? 'selected' : ''}`, 'aria-selected': on ? 'true' : 'false',
        title: e.c.description || e.c.changeKind, onclick: () => { this.entry = e; this.renderCatalogue(); },
      }, e.from === 'chat' ? `${e.c.label} (this chat)` : e.c.label);
    }));
    this.renderVars();
    this.choose();
  }

  // renderVars offers a turn for each template variable.
  renderVars() {
    const box = $('#cs-vars');
    const e = this.entry;
    if (!e || !e.vars.length) { box.replaceChildren(); box.hidden = true; return; }
    const turns = this.turns();
    const label = { turnId: 'Turn', originalTurnId: 'From turn', modifiedTurnId: 'To turn' };
    box.hidden = false;
    box.replaceChildren(...e.vars.map((v) => {
      const ids = turns.map((t) => t.id);
      if (!ids.includes(this.values[v])) {
        // Newest turn by default; a comparison starts from the oldest.
        this.values[v] = v === 'originalTurnId' ? ids[ids.length - 1] : ids[0];
      }
      const sel = h('select', { 'aria-label': label[v], 'data-var': v, onchange: (ev) => { this.values[v] = ev.target.value; this.choose(); } },
        turns.map((t, i) => h('option', { value: t.id }, `${turns.length - i}. ${(t.message && t.message.text || '').slice(0, 40)}`)));
      sel.value = this.values[v] || '';
      return h('label', {}, `${label[v]} `, sel);
    }));
  }

  // choose subscribes to the changeset the entry and the variables name.
  async choose() {
    const e = this.entry;
    if (!e) { this.detach(); this.render(null); return; }
    if (e.vars.some((v) => !this.values[v])) {
      this.detach();
      this.render(null, 'No turn to show the changes of yet.');
      return;
    }
    const uri = expand(e.c.uriTemplate, this.values);
    if (uri === this.uri) return;
    this.detach();
    this.uri = uri;
    this.render(undefined);
    let st;
    try {
      st = await this.client.subscribe(uri, undefined, 'changeset');
    } catch (err) {
      if (this.uri === uri) { this.uri = null; this.render(null, `Cannot open the changeset: ${err.message}`); }
      return;
    }
    if (this.uri !== uri) return;
    this.unwatch = this.client.watch(uri, (s) => this.render(s));
    this.render(st);
  }

  // render shows the changeset: undefined while it loads, null for none.
  render(st, note) {
    $('#cs-view').hidden = !this.entry;
    $('#cs-note').textContent = note || (st === undefined ? 'Loading…' : '');
    $('#cs-note').hidden = !$('#cs-note').textContent;
    const e = this.entry;
    if (!e) return;
    $('#cs-label').textContent = e.c.label;
    if (!st) {
      $('#cs-status').textContent = '';
      $('#cs-stats').textContent = '';
      $('#cs-ops').replaceChildren();
      $('#cs-error').hidden = true;
      $('#cs-files').replaceChildren();
      this.rows.clear();
      return;
    }
    $('#cs-status').textContent = st.status;
    $('#cs-status').className = `tag status-${st.status}`;
    $('#cs-error').hidden = !(st.status === 'error' && st.error);
    $('#cs-error').textContent = st.error ? st.error.message : '';
    const files = st.files || [];
    let added = 0; let removed = 0;
    for (const f of files) { added += (f.edit && f.edit.diff && f.edit.diff.added) || 0; removed += (f.edit && f.edit.diff && f.edit.diff.removed) || 0; }
    $('#cs-stats').textContent = `${files.length} file${files.length === 1 ? '' : 's'}, +${added} −${removed}`;
    const ops = st.operations || [];
    $('#cs-ops').replaceChildren(...ops.filter((o) => o.scopes.includes('changeset')).map((o) => this.opButton(o)));
    const review = !!(e.c.capabilities && e.c.capabilities.review);
    // Rows are kept while their file and the operations stay the same
    // objects, so an update rebuilds only what changed.
    const list = $('#cs-files');
    const rows = new Map();
    let prev = null;
    for (const f of files) {
      let row = this.rows.get(f.id);
      if (!row || row.f !== f || row.ops !== ops || row.open !== this.open.has(f.id)) {
        const el = this.renderFile(f, ops, review);
        if (row) row.el.replaceWith(el);
        row = { f, ops, open: this.open.has(f.id), el };
      }
      rows.set(f.id, row);
      const want = prev ? prev.nextSibling : list.firstChild;
      if (want !== row.el) list.insertBefore(row.el, want);
      prev = row.el;
    }
    for (const child of [...list.children]) if (!child.dataset.id || !rows.has(child.dataset.id) || rows.get(child.dataset.id).el !== child) child.remove();
    this.rows = rows;
    if (!files.length) list.append(h('li', { class: 'muted' }, st.status === 'computing' ? 'Computing…' : 'No changes.'));
  }

  // path shows a file's URI relative to the session's directory it is in.
  path(uri) {
    const ss = this.client.state(this.app.sessionURI);
    for (const d of (ss && ss.workingDirectories) || []) {
      const base = d.replace(/\/+$/, '') + '/';
      if (uri.startsWith(base)) return decodeURIComponent(uri.slice(base.length));
    }
    return decodeURIComponent(uri.replace(/^file:\/\//, ''));
  }

  renderFile(f, ops, review) {
    const e = f.edit || {};
    const kind = editKind(e);
    const uri = (e.after && e.after.uri) || (e.before && e.before.uri) || f.id;
    const name = kind === 'renamed' ? `${this.path(e.before.uri)} → ${this.path(e.after.uri)}` : this.path(uri);
    const d = e.diff || {};
    const stats = d.added != null || d.removed != null ? `+${d.added || 0} −${d.removed || 0}` : '';
    const isOpen = this.open.has(f.id);
    const li = h('li', { class: `cs-file ${kind}`, 'data-id': f.id });
    const head = h('div', { class: 'cs-file-head' },
      h('button', { type: 'button', class: 'link cs-name', 'aria-expanded': isOpen ? 'true' : 'false', onclick: () => this.toggle(f) },
        `${isOpen ? '▾' : '▸'} ${name}`),
      h('span', { class: 'tag' }, kind),
      stats ? h('span', { class: 'cs-stats' }, stats) : null,
      h('span', { class: 'spacer' }),
      review ? h('label', { class: 'cs-viewed' }, h('input', {
        type: 'checkbox', checked: !!f.reviewed,
        onchange: (ev) => this.client.dispatch(this.uri, { type: 'changeset/filesReviewChanged', files: [f.id], reviewed: ev.target.checked }),
      }), ' Viewed') : null,
      ops.filter((o) => o.scopes.includes('resource')).map((o) => this.opButton(o, { kind: 'resource', resource: uri })));
    li.append(head);
    if (isOpen) li.append(this.diffOf(f, ops));
    return li;
  }

  toggle(f) {
    if (this.open.has(f.id)) this.open.delete(f.id); else this.open.add(f.id);
    this.render(this.client.state(this.uri));
  }

  // diffOf returns the element of a file's diff, reading both sides the
  // first time; hunks get the range operations.
  diffOf(f, ops) {
    // Keyed by the edit: a review flag changes the file, not its edit.
    const key = f.edit || f;
    let el = this.diffs.get(key);
    if (el && el.ops === ops) return el;
    el = h('div', { class: 'cs-diff muted' }, 'Loading…');
    el.ops = ops;
    this.diffs.set(key, el);
    this.loadDiff(f, ops, el);
    return el;
  }

  async loadDiff(f, ops, el) {
    const e = f.edit || {};
    const read = async (side) => {
      if (!side) return '';
      const ref = side.content;
      if (!ref || !ref.uri) return null;
      if (ref.sizeHint > 4 << 20) throw new Error(`too large to show (${ref.sizeHint.toLocaleString()} bytes)`);
      const res = await this.client.request('resourceRead', { channel: ROOT, uri: ref.uri, encoding: 'utf-8' });
      return res.encoding === 'utf-8' ? res.data : null;
    };
    let before; let after;
    try {
      [before, after] = await Promise.all([read(e.before), read(e.after)]);
    } catch (err) {
      el.textContent = `Cannot show the diff: ${err.message}`;
      return;
    }
    if (before === null || after === null) { el.textContent = 'Binary file.'; return; }
    const ranges = ops.filter((o) => o.scopes.includes('range'));
    const uri = (e.after && e.after.uri) || (e.before && e.before.uri) || f.id;
    const pre = h('pre', { class: 'diff' });
    const lines = diffLines(before, after);
    // Hunks: runs of added and deleted lines, with up to 3 lines around.
    for (let i = 0; i < lines.length;) {
      if (lines[i].kind === 'ctx') {
        const next = lines.findIndex((l, k) => k > i && l.kind !== 'ctx');
        const prev = lines.slice(0, i).some((l) => l.kind !== 'ctx');
        const end = next < 0 ? lines.length : next;
        const keepHead = prev ? 3 : 0; const keepTail = next < 0 ? 0 : 3;
        if (end - i > keepHead + keepTail + 1) {
          for (let k = i; k < i + keepHead; k++) pre.append(diffLine(lines[k]));
          pre.append(h('div', { class: 'gap' }, `⋯ ${end - i - keepHead - keepTail} unchanged lines`));
          for (let k = end - keepTail; k < end; k++) pre.append(diffLine(lines[k]));
        } else {
          for (let k = i; k < end; k++) pre.append(diffLine(lines[k]));
        }
        i = end;
        continue;
      }
      let j = i;
      while (j < lines.length && lines[j].kind !== 'ctx') j++;
      const hunk = lines.slice(i, j);
      // The hunk in new-side lines: where it starts, and how many lines it
      // has there (none for a pure deletion, which sits before line start).
      const adds = hunk.filter((l) => l.kind === 'add');
      const start = adds.length ? adds[0].b : hunk[0].b;
      const range = { start: { line: start, character: 0 }, end: { line: start + adds.length, character: 0 } };
      const box = h('div', { class: 'hunk' });
      if (ranges.length) {
        box.append(h('div', { class: 'hunk-ops' }, ranges.map((o) => this.opButton(o, { kind: 'range', resource: uri, side: 'after', range }))));
      }
      for (const l of hunk) box.append(diffLine(l));
      pre.append(box);
      i = j;
    }
    if (!lines.some((l) => l.kind !== 'ctx')) pre.append(h('div', { class: 'muted' }, 'No line changes.'));
    el.className = 'cs-diff';
    el.replaceChildren(pre);
  }

  opButton(op, target) {
    const running = op.status === 'running';
    const btn = h('button', {
      type: 'button', class: op.confirmation ? 'danger' : '', 'data-op': op.id,
      title: op.error ? `${op.description || op.label}: failed: ${op.error.message}` : op.description || '',
      disabled: running || op.status === 'disabled',
      onclick: () => this.invoke(op, target),
    }, running ? `${op.label}…` : op.label);
    if (op.status === 'error' && op.error && !target) return [btn, h('span', { class: 'tag error' }, op.error.message)];
    return btn;
  }

  // invoke runs an operation, after the confirmation it asks for.
  async invoke(op, target) {
    const uri = this.uri;
    if (!uri) return;
    if (op.confirmation && !(await this.confirm(plain(op.confirmation), op.label))) return;
    const params = { channel: uri, operationId: op.id };
    if (target) params.target = target;
    try {
      const res = await this.client.request('invokeChangesetOperation', params);
      this.app.toast(plain(res && res.message) || `${op.label}: done.`);
    } catch (err) {
      this.app.toast(`${op.label} failed: ${err.message}`);
    }
  }

  // confirm shows the operation's confirmation and resolves to whether the
  // user accepted it.
  confirm(text, label) {
    const dlg = $('#op-dialog');
    $('#op-text').textContent = text;
    $('#op-ok').textContent = label;
    return new Promise((resolve) => {
      // The close event of an earlier showing can still be on its way
      // when this one opens: it finds the dialog open, and is ignored.
      dlg.onclose = () => {
        if (dlg.open) return;
        dlg.onclose = null;
        resolve(dlg.returnValue === 'ok');
      };
      dlg.returnValue = '';
      dlg.showModal();
    });
  }
}
