/** The one cost format of /admin (format.js): 「$1,234.5678」, 「$0.0001未満」 for a cost too small to show. */
export declare function formatCost(usd: number | string | null | undefined): string;
