// Small DOM helpers shared by the page's views.

/** h creates an element with attributes, listeners (on*) and children. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export const $ = (sel) => document.querySelector(sel);

// diffView renders a line diff of two texts (longest common subsequence,
// bounded: large files show both sides' changed lines without alignment).
export function diffView(a, b) {
  const x = a.split('\n'); const y = b.split('\n');
  const pre = h('pre', { class: 'diff' });
  if (x.length * y.length > 4e6) {
    for (const l of x) pre.append(h('div', { class: 'del' }, `- ${l}`));
    for (const l of y) pre.append(h('div', { class: 'add' }, `+ ${l}`));
    return pre;
  }
  const n = x.length; const m = y.length;
  const L = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) L[i][j] = x[i] === y[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  let i = 0; let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) { pre.append(h('div', { class: 'ctx' }, `  ${x[i]}`)); i++; j++; }
    else if (j < m && (i === n || L[i][j + 1] >= L[i + 1][j])) { pre.append(h('div', { class: 'add' }, `+ ${y[j]}`)); j++; }
    else { pre.append(h('div', { class: 'del' }, `- ${x[i]}`)); i++; }
  }
  return pre;
}

