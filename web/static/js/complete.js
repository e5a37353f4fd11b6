// Completions in the composer: when the word at the cursor starts with
// "@" (a file or folder) or, at the start of the message, "/" (one of the
// agent's commands), the host's completions command offers items; a small
// list under the message box shows them. Up and Down move, Enter or Tab
// accepts, Escape closes. An accepted item replaces its range of the
// text and its attachment travels with the message. JavaScript string
// offsets are UTF-16 code units, as the protocol's are.

import { h } from './dom.js';

const DELAY = 120; // ms after the last keystroke
const SPACE = /\s/;

// triggerAt returns the word at the cursor when it may have completions.
export function triggerAt(text, cursor) {
  let start = cursor;
  while (start > 0 && !SPACE.test(text[start - 1])) start--;
  const word = text.slice(start, cursor);
  if (word.startsWith('@')) return word;
  if (word.startsWith('/') && text.slice(0, start).trim() === '') return word;
  return '';
}

// position returns the line and UTF-16 character of offset in text.
function position(text, offset) {
  const before = text.slice(0, offset);
  const nl = before.lastIndexOf('\n');
  return { line: before.split('\n').length - 1, character: offset - nl - 1 };
}

// attachmentsFor returns the accepted items' attachments whose inserted
// text is still in the message, with their range in it.
export function attachmentsFor(text, accepted) {
  const out = [];
  for (const { insertText, attachment } of accepted) {
    const at = text.indexOf(insertText);
    if (at < 0) continue;
    out.push({ ...attachment, range: { start: position(text, at), end: position(text, at + insertText.length) } });
  }
  return out;
}

export class Completer {
  // input is the textarea; request(text, offset) returns a promise of the
  // host's items.
  constructor(input, request) {
    this.input = input;
    this.request = request;
    this.list = h('ul', { id: 'completions', role: 'listbox', hidden: '' });
    input.after(this.list);
    this.items = [];
    this.index = 0;
    this.accepted = [];
    this.timer = 0;
    this.asked = 0;
    input.addEventListener('input', () => this.soon());
    // Leaving the box closes the list, unless focus came back meanwhile
    // (a click on an item keeps it: mousedown does not blur).
    input.addEventListener('blur', () => setTimeout(() => { if (document.activeElement !== input) this.close(); }, 150));
  }

  soon() {
    clearTimeout(this.timer);
    const text = this.input.value;
    const cursor = this.input.selectionStart;
    if (!triggerAt(text, cursor)) { this.close(); return; }
    this.timer = setTimeout(() => this.ask(text, cursor), DELAY);
  }

  async ask(text, cursor) {
    const n = ++this.asked;
    let items = [];
    try { items = (await this.request(text, cursor)) || []; } catch { items = []; }
    // An answer overtaken by typing is dropped.
    if (n !== this.asked || this.input.value !== text) return;
    this.show(items);
  }

  show(items) {
    this.items = items;
    this.index = 0;
    this.list.replaceChildren(...items.map((it, i) => {
      const a = it.attachment || {};
      const li = h('li', { role: 'option', class: a.displayKind === 'directory' ? 'dir' : '' }, it.insertText);
      li.addEventListener('mousedown', (e) => { e.preventDefault(); this.accept(i); });
      return li;
    }));
    this.list.hidden = items.length === 0;
    this.mark();
  }

  mark() {
    [...this.list.children].forEach((li, i) => li.setAttribute('aria-selected', String(i === this.index)));
    this.list.children[this.index]?.scrollIntoView({ block: 'nearest' });
  }

  close() {
    clearTimeout(this.timer);
    this.asked++;
    this.items = [];
    this.list.hidden = true;
    this.list.replaceChildren();
  }

  get open() { return !this.list.hidden && this.items.length > 0; }

  // key handles a keydown while the list is open; true when it took it.
  key(e) {
    if (!this.open || e.isComposing) return false;
    switch (e.key) {
      case 'ArrowDown': this.index = (this.index + 1) % this.items.length; this.mark(); break;
      case 'ArrowUp': this.index = (this.index + this.items.length - 1) % this.items.length; this.mark(); break;
      case 'Enter': case 'Tab': this.accept(this.index); break;
      case 'Escape': this.close(); break;
      default: return false;
    }
    e.preventDefault();
    e.stopPropagation();
    return true;
  }

  accept(i) {
    const it = this.items[i];
    if (!it) return;
    const text = this.input.value;
    const cursor = this.input.selectionStart;
    const start = it.rangeStart ?? cursor;
    const end = it.rangeEnd ?? cursor;
    const after = text.slice(end);
    const sep = after.startsWith(' ') ? '' : ' ';
    this.input.value = text.slice(0, start) + it.insertText + sep + after;
    const caret = start + it.insertText.length + 1;
    this.input.setSelectionRange(caret, caret);
    this.accepted.push(it);
    this.close();
    this.input.dispatchEvent(new Event('input'));
  }

  // take returns the attachments of the message text and forgets them.
  take(text) {
    const out = attachmentsFor(text, this.accepted);
    this.accepted = [];
    return out;
  }
}
