// The dashboard's icons: 24x24 SVG paths, coloured by CSS (no icon font and no emoji, which a browser without
// an emoji font shows as an empty box).

const ICONS = {
  overview: 'M3 13h8V3H3zm0 8h8v-6H3zm10 0h8V11h-8zm0-18v6h8V3z',
  jobs: 'M4 6h16v2H4zm0 5h16v2H4zm0 5h10v2H4z',
  submit: 'M12 4l-7 7h4v7h6v-7h4z',
  // a window with a prompt in it: an app running on a node
  sessions:
    'M3 4h18v4H3zm0 4h2v12H3zm16 0h2v12h-2zM3 18h18v2H3zm4-7.5l1.4-1.4 3.9 3.9-3.9 3.9L7 15.5l2.5-2.5z' +
    'm6 4.5h4.5v1.5H13z',
  workflows:
    'M6 3a3 3 0 110 6 3 3 0 010-6zm12 12a3 3 0 110 6 3 3 0 010-6zM6 15a3 3 0 110 6 3 3 0 010-6z' +
    'M7 9v6h2V9zm1 3h6.5a2.5 2.5 0 012.5 2.5V15h2v-.5A4.5 4.5 0 0014.5 10H8z',
  sweeps: 'M3 3h5v5H3zm6.5 0h5v5h-5zM16 3h5v5h-5zM3 9.5h5v5H3zm6.5 0h5v5h-5zM16 9.5h5v5h-5zM3 16h5v5H3zm6.5 0h5v5h-5z',
  schedules: 'M12 2a10 10 0 110 20 10 10 0 010-20zm0 2a8 8 0 100 16 8 8 0 000-16zm-1 3h2v5.2l3.6 2.1-1 1.7L11 13.4z',
  files: 'M3 5a2 2 0 012-2h5l2 2h7a2 2 0 012 2v11a2 2 0 01-2 2H5a2 2 0 01-2-2z',
  history: 'M13 3a9 9 0 00-9 9H1l4 4 4-4H6a7 7 0 117 7v2a9 9 0 000-18zm-1 5v5l4 2.5.8-1.3-3.3-2V8z',
  resources: 'M3 21V10h4v11zm7 0V3h4v18zm7 0v-7h4v7z',
  settings:
    'M19.4 13a7.5 7.5 0 000-2l2.1-1.6-2-3.5-2.5 1a7.7 7.7 0 00-1.7-1L15 3h-4l-.4 2.9a7.7 7.7 0 00-1.7 1l-2.5-1-2 3.5' +
    'L6.6 11a7.5 7.5 0 000 2l-2.1 1.6 2 3.5 2.5-1a7.7 7.7 0 001.7 1L11 21h4l.4-2.9a7.7 7.7 0 001.7-1l2.5 1 2-3.5z' +
    'M13 15.5a3.5 3.5 0 110-7 3.5 3.5 0 010 7z',
  // the file browser's entries, drawn outlined (.ficon)
  directory: 'M3 6a2 2 0 012-2h4l2 2h8a2 2 0 012 2v9a2 2 0 01-2 2H5a2 2 0 01-2-2z',
  file: 'M6 2h8l5 5v13a2 2 0 01-2 2H6a2 2 0 01-2-2V4a2 2 0 012-2zm7 1.5V8h4.5',
  symlink: 'M10 14a4 4 0 005.7 0l3-3a4 4 0 00-5.7-5.7l-1 1M14 10a4 4 0 00-5.7 0l-3 3a4 4 0 005.7 5.7l1-1',
  up: 'M12 19V5m0 0l-6 6m6-6l6 6',
};

/** An <svg> of the named icon (empty for an unknown name), hidden from screen readers; `className` styles it. */
export function icon(name, className) {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  if (className) svg.setAttribute('class', className);
  const path = document.createElementNS('http://www.w3.org/2000/svg', 'path');
  path.setAttribute('d', ICONS[name] || '');
  svg.append(path);
  return svg;
}
