// The fixed vocabulary of answer codes (documented in docs/figure-renderer.md). Every refusal carries
// one of these codes plus a short detail that never quotes the figure (a snippet's own error message,
// its first line, is quoted: it is the snippet author's to read).
export const CODES = Object.freeze([
  'request_invalid',     // the request line is not a valid job (not JSON, missing/relative paths)
  'figure_missing',      // no file at the figure (or snippet) path
  'figure_not_regular',  // a symlink, directory, FIFO or device where the figure JSON should be
  'figure_empty',        // zero bytes
  'figure_too_large',    // over the size cap (16 MiB by default)
  'figure_too_deep',     // JSON nested deeper than the cap (a JSON bomb), or too many values
  'figure_invalid',      // not UTF-8, not JSON, or not a figure's shape
  'figure_size_invalid', // layout.width/height not a number or outside the bounds
  'no_webgl',            // a WebGL trace could not draw: plotly showed "WebGL is not supported"
  'library_unavailable', // the figure is of a library whose JavaScript this renderer was not given
  'draw_failed',         // the library's draw threw, or the page crashed
  'size_mismatch',       // the screenshot did not come out at the exact canvas size
  'output_failed',       // the PNG could not be written at the out path
  'timeout',             // the job did not finish within its timeout_ms
  'cancelled',           // the host cancelled the job ({"cancel": id}); its page is closed, nothing is written
  'browser_failed',      // the browser could not make a page (the renderer exits; the host restarts it)
  'snippet_error',       // a JavaScript snippet threw, did not parse, or left a rejection unhandled while drawing
  'import_refused',      // a muix snippet imports a module the page does not provide
  'blank',               // the snippet's screenshot is one flat colour (it drew nothing)
  'navigated',           // the snippet's page left its own document (or tried to) before the draw ended
]);

// extra: fields the answer carries besides code and detail (snippet_error's error_class and
// error_line, import_refused's error_line and module); undefined values are left out.
export class FigureError extends Error {
  constructor(code, detail, extra = {}) {
    super(`${code}: ${detail}`);
    if (!CODES.includes(code)) throw new Error(`unknown figure error code ${code}`);
    this.code = code;
    this.detail = detail;
    this.extra = Object.fromEntries(Object.entries(extra).filter(([, v]) => v !== undefined));
  }
}
