// The fixed vocabulary of answer codes (documented in ../README.md). Every refusal carries one of
// these codes plus a short detail that never quotes the figure.
export const CODES = Object.freeze([
  'request_invalid',     // the request line is not a valid job (not JSON, missing/relative paths)
  'figure_missing',      // no file at the figure path
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
]);

export class FigureError extends Error {
  constructor(code, detail) {
    super(`${code}: ${detail}`);
    if (!CODES.includes(code)) throw new Error(`unknown figure error code ${code}`);
    this.code = code;
    this.detail = detail;
  }
}
