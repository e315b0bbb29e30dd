// The workflow editor's YAML field: a textarea with line numbers and error marks in its gutter. Tab types two
// spaces (Escape, then Tab, leaves the field, so the keyboard is never trapped).
import { h, replace } from '../dom.js';

/** codeEditor(text, onInput(text)) -> {el, area, value, setErrors(Map line -> message), goToLine(line)}. */
export function codeEditor(initial, onInput) {
  const gutter = h('div', { class: 'code-gutter', 'aria-hidden': 'true' });
  const marks = h('div', { class: 'code-marks', 'aria-hidden': 'true' });
  const area = h('textarea', {
    class: 'code-input',
    spellcheck: 'false',
    wrap: 'off',
    'aria-label': 'Workflow YAML',
    autocapitalize: 'off',
    autocomplete: 'off',
  });
  area.value = initial;
  const wrap = h('div', { class: 'code-editor' }, gutter, h('div', { class: 'code-area' }, marks, area));
  let errorLines = new Map();
  function drawGutter() {
    const count = area.value.split('\n').length;
    const rows = [];
    for (let i = 1; i <= count; i += 1) {
      const msg = errorLines.get(i);
      rows.push(h('div', { class: msg ? 'has-error' : null, title: msg || null }, String(i)));
    }
    replace(gutter, rows);
    replace(
      marks,
      [...errorLines.entries()]
        .filter(([line]) => line <= count)
        .map(([line, msg]) =>
          h('div', { class: 'code-mark', style: { top: `${(line - 1) * 20 + 10}px` }, title: msg }),
        ),
    );
    gutter.scrollTop = area.scrollTop;
    marks.style.transform = `translateY(${-area.scrollTop}px)`;
  }
  area.addEventListener('input', () => {
    drawGutter();
    onInput(area.value);
  });
  area.addEventListener('scroll', () => {
    gutter.scrollTop = area.scrollTop;
    marks.style.transform = `translateY(${-area.scrollTop}px)`;
  });
  area.addEventListener('keydown', (e) => {
    if (e.key === 'Tab' && !e.shiftKey && !e.ctrlKey && !e.altKey) {
      // two spaces; Escape then Tab leaves the editor
      if (area.dataset.escaped === '1') {
        area.dataset.escaped = '';
        return;
      }
      e.preventDefault();
      area.setRangeText('  ', area.selectionStart, area.selectionEnd, 'end');
      drawGutter();
      onInput(area.value);
    } else if (e.key === 'Escape') {
      area.dataset.escaped = '1';
    }
  });
  drawGutter();
  return {
    el: wrap,
    area,
    get value() {
      return area.value;
    },
    set value(text) {
      area.value = text;
      drawGutter();
    },
    setErrors(lines) {
      errorLines = lines;
      drawGutter();
    },
    goToLine(line) {
      const lines = area.value.split('\n');
      const start = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0);
      area.focus();
      area.setSelectionRange(start, start + (lines[line - 1] || '').length);
      area.scrollTop = Math.max(0, (line - 4) * 20);
    },
  };
}
