// The formats of /admin, in one place for the page (served as /admin/assets/format.js, `window.HishoFormat`)
// and for the server (`require('./format')`, typed by format.d.ts). Plain JavaScript: the page has no bundler.
(function (root, make) {
  if (typeof module === 'object' && module.exports) module.exports = make();
  else root.HishoFormat = make();
})(typeof self !== 'undefined' ? self : this, function () {
  'use strict';
  const DOLLARS = new Intl.NumberFormat('en-US', { minimumFractionDigits: 4, maximumFractionDigits: 4 });

  /**
   * Every cost in USD on every page: 「$1,234.5678」 — four decimals always (a single model call costs fractions of
   * a cent), thousands grouped; a cost above zero that would read as $0.0000 reads 「$0.0001未満」.
   */
  function formatCost(usd) {
    const v = Number(usd) || 0;
    return v > 0 && v < 0.00005 ? '$0.0001未満' : `$${DOLLARS.format(v)}`;
  }

  return { formatCost };
});
