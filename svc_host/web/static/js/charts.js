// The chart components (components/chart.js) loaded on demand, so a page still shows its numbers without them.
export async function loadCharts() {
  try {
    return await import('./components/chart.js');
  } catch (err) {
    console.warn('charts unavailable', err);
    return null;
  }
}
