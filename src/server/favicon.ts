/** The service's icon (a speech bubble in the header's colour): browsers ask for /favicon.ico on every page. */
export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">' +
  '<rect width="32" height="32" rx="7" fill="#2c3e50"/>' +
  '<path d="M7 9a3 3 0 0 1 3-3h12a3 3 0 0 1 3 3v9a3 3 0 0 1-3 3h-7l-5 5v-5h0a3 3 0 0 1-3-3z" fill="#fff"/>' +
  '<circle cx="12" cy="13.5" r="1.6" fill="#2c3e50"/><circle cx="16" cy="13.5" r="1.6" fill="#2c3e50"/>' +
  '<circle cx="20" cy="13.5" r="1.6" fill="#2c3e50"/></svg>';
